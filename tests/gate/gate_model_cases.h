// The named cases of the gate's rule (redis-cell's style: a table over an
// explicit clock): a configuration, a list of calls with the decision each
// must get, then exact checks of the state after them. Run on the reference
// model (gate_model_test.cpp) and through the real scripts beside the model
// (gate_model_diff_test.cpp).
#pragma once

#include <cstdint>
#include <functional>
#include <ostream>
#include <string>
#include <vector>

#include "bp/gate_model.h"

namespace bp::gate_model {

inline constexpr int64_t kCaseT0 = 1'700'000'000'000;  // ms; calls give offsets from it

struct Call {
  int64_t at_ms = 0;  // offset from kCaseT0
  std::string tenant;
  int64_t k = 1, requests = 1, tokens = 0, max_tokens = 0;
  Verdict want = Verdict::kAdmit;
  // ADMIT: the ticket; DEFER: the binding; REJECT: the reason.
  std::string text;
  int64_t delta_ms = 0;  // DEFER
  bool release = false;  // a Release of ticket `text` instead (outcome below)
  std::string outcome = "ok";
  // The release's rate-limit headers (-1 = absent; reset in ms).
  double remaining_requests = -1, reset_requests_ms = -1;
  double remaining_tokens = -1, reset_tokens_ms = -1;
};

struct Case {
  std::string name;
  Config config;
  Mode mode = Mode::kReconcile;
  std::vector<Call> calls;
  std::function<void(const Model&)> check = [](const Model&) {};
};

inline void PrintTo(const Case& c, std::ostream* os) { *os << c.name; }

std::vector<Case> Cases();
// The adaptive caps' header rule (gate_model_header_cases.cpp); part of Cases().
std::vector<Case> HeaderCases();
// The L1 line (gate_model_line_cases.cpp); part of Cases().
std::vector<Case> LineCases();

// The model's input for call `call` of a case in mode `mode`.
AdmitInput AdmitOf(const Call& call, Mode mode);
ReleaseInput ReleaseOf(const Call& call);

}  // namespace bp::gate_model
