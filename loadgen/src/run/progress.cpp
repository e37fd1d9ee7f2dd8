// The progress line (progress.h).
#include "bp/loadgen/progress.h"

#include <algorithm>
#include <cmath>

namespace bp::loadgen {
namespace {

std::string Seconds(double s) { return std::to_string(static_cast<int64_t>(std::floor(s))) + "s"; }

int64_t At(const std::vector<int64_t>& v, size_t k) { return k < v.size() ? v[k] : 0; }

}  // namespace

std::string ProgressLine(const ProgressSnapshot& s) {
  // Built with append: GCC 12's -Wrestrict misfires on `"~" + std::string`.
  std::string line = s.label;
  line.append(" ").append(Seconds(s.elapsed_s)).append(" / ");
  if (s.done > 0 && s.total > 0) {
    line.append("~").append(Seconds(std::min(
        s.cap_s, s.elapsed_s * static_cast<double>(s.total) / static_cast<double>(s.done))));
  } else {
    line.append("?");
  }
  line.append(" (cap ").append(Seconds(s.cap_s)).append(", paper ");
  line.append(Seconds(s.elapsed_s * s.speedup)).append(") done ");
  line.append(std::to_string(s.done)).append("/").append(std::to_string(s.total));
  line.append(" slots ").append(std::to_string(s.busy_slots)).append("/");
  line.append(std::to_string(s.slots));
  int64_t ok = 0, throttled = 0, local = 0;
  for (size_t k = 1; k < s.ok.size(); ++k) {
    ok += At(s.ok, k);
    throttled += At(s.throttled, k);
    local += At(s.local, k);
  }
  line += " | ok " + std::to_string(ok) + " 429 " + std::to_string(throttled);
  if (local > 0) line += " local " + std::to_string(local);
  if (s.ok.size() > 2) {  // more than one class: per class too
    for (size_t k = 1; k < s.ok.size(); ++k) {
      line += " | P" + std::to_string(k) + " ok " + std::to_string(At(s.ok, k)) + " 429 " +
              std::to_string(At(s.throttled, k));
      if (At(s.local, k) > 0) line += " local " + std::to_string(At(s.local, k));
    }
  }
  return line;
}

}  // namespace bp::loadgen
