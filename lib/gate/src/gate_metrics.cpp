// The client-side counters as exposition text (gate_metrics.h).
#include "bp/gate_metrics.h"

#include <cstdint>

namespace bp {
namespace {

std::string Escape(const std::string& s) {
  std::string out;
  for (char c : s) {
    if (c == '\n') {
      out += "\\n";
      continue;
    }
    if (c == '\\' || c == '"') out.push_back('\\');
    out.push_back(c);
  }
  return out;
}

}  // namespace

std::string GateCountersExposition(
    const std::vector<std::pair<std::string, GateCounters>>& by_target) {
  struct Family {
    const char* name;
    const char* help;
    uint64_t GateCounters::*field;
  };
  static constexpr Family kFamilies[] = {
      {"bp_gate_client_admits_total", "ADMIT verdicts this worker got.", &GateCounters::admits},
      {"bp_gate_client_defers_total", "DEFER verdicts this worker got.", &GateCounters::defers},
      {"bp_gate_client_rejects_total", "REJECT verdicts this worker got.", &GateCounters::rejects},
      {"bp_gate_client_releases_total", "Release calls made.", &GateCounters::releases},
      {"bp_gate_client_release_errors_total", "Releases that failed (not applied).",
       &GateCounters::release_errors},
      {"bp_gate_client_timeouts_total", "Calls with no answer within the command timeout.",
       &GateCounters::timeouts},
      {"bp_gate_client_connection_errors_total", "Calls that failed on a refused or reset "
       "connection.", &GateCounters::connection_errors},
      {"bp_gate_client_breaker_opens_total", "Times the circuit breaker opened.",
       &GateCounters::breaker_opens},
      {"bp_gate_client_breaker_skips_total", "Calls the open breaker answered without the server.",
       &GateCounters::breaker_skips},
      {"bp_gate_client_reseeds_total", "Re-seeds of the target's declared configuration.",
       &GateCounters::reseeds},
  };
  std::string out;
  for (const Family& f : kFamilies) {
    out += std::string("# HELP ") + f.name + " " + f.help + "\n# TYPE " + f.name + " counter\n";
    for (const auto& [target, c] : by_target) {
      out += std::string(f.name) + "{target=\"" + Escape(target) + "\"} " +
             std::to_string(c.*(f.field)) + "\n";
    }
  }
  const char* fail = "bp_gate_client_fail_opens_total";
  out += std::string("# HELP ") + fail + " Admits that failed open (the call went ungated), by "
         "cause.\n# TYPE " + fail + " counter\n";
  for (const auto& [target, c] : by_target) {
    const std::pair<const char*, uint64_t> causes[] = {
        {"unreachable", c.fail_opens_unreachable},
        {"timed_out", c.fail_opens_timed_out},
        {"unconfigured", c.fail_opens_unconfigured},
        {"server_error", c.fail_opens_server_error}};
    for (auto [cause, n] : causes) {
      out += std::string(fail) + "{target=\"" + Escape(target) + "\",cause=\"" + cause + "\"} " +
             std::to_string(n) + "\n";
    }
  }
  return out;
}

}  // namespace bp
