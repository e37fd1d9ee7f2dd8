// The reference model's pieces shared by admission and release
// (gate_model.h): the class weight, the learned fraction of a cap, a
// ticket's stored text and the configuration step.
#include "bp/gate_model.h"

#include <algorithm>

namespace bp::gate_model {

double ClassWeight(std::optional<double> omega, bool no_priority) {
  double o = 1;
  if (!no_priority) o = omega.value_or(1);
  if (o <= 0) o = 1e-9;
  return o;
}

double LearnedFraction(std::optional<double> f, double t_us, std::optional<double> tau_us,
                       double now_us) {
  if (!f || !tau_us || *tau_us <= 0) return 1;
  return std::min(1.0, *f + std::max(0.0, now_us - t_us) / *tau_us);
}

double AdmitAheadUs(int64_t ahead_ms, double own_us) {
  return std::max(0.0, std::min(static_cast<double>(ahead_ms) * 1000, kAdmitAheadCalls * own_us));
}

std::string Ticket::Text() const {
  return k + " " + std::to_string(requests) + " " + std::to_string(debited) + " " +
         std::to_string(ablation) + " " + queue + " " + std::to_string(tag_tokens);
}

void Model::Configure(const Config& c) {
  config = c;
  if (!config.adapt) state.learned.reset();
}

}  // namespace bp::gate_model
