// The gate caps a workload configures, and their check against bp/gate_ranges.h's
// ranges (workload.h GateCapsOf, CheckGateRanges).
#include "bp/gate_ranges.h"

#include <string>

#include "bp/decimal.h"
#include "bp/gate.h"
#include "bp/loadgen/workload.h"

namespace bp::loadgen {

GateCaps GateCapsOf(const Workload& workload, double speedup) {
  GateCaps caps;
  caps.requests_per_s = workload.caps.requests_per_s * workload.gate_cap_factor * speedup;
  caps.tokens_per_s = workload.caps.tokens_per_s * workload.gate_cap_factor * speedup;
  caps.burst_s = workload.gate_burst_s / speedup;
  // The largest call the upstream serves (limits per window are unchanged
  // by the speedup): above it the gate REJECTs, below it a call larger
  // than the burst is admitted into debt (docs/gate.md).
  caps.max_cost_requests = workload.caps.max_requests_per_call;
  caps.max_cost_tokens = workload.caps.max_tokens_per_call;
  return caps;
}

Status CheckGateRanges(const Workload& workload, double speedup) {
  const GateCaps caps = GateCapsOf(workload, speedup);
  const std::string at = speedup == 1 ? "" : " at speedup " + FormatShort(speedup);
  struct Check {
    const char* field;  // where the value comes from in the workload
    double given;       // that field's value
    const char* name;   // the GateCaps field
    double value, min, max;
    const char* unit;
  };
  const double requests = workload.caps.requests_per_s * workload.gate_cap_factor;
  const double tokens = workload.caps.tokens_per_s * workload.gate_cap_factor;
  // A max cost of 0 is "no limit" and never derived (every limit admits >= 1).
  // burst_s in the file's (paper) seconds: the speedup divides it as it
  // multiplies the caps, so the bucket's content (cap x burst) is the same,
  // and time-compressed runs (speedup up to 1000) keep the shipped 0.1 s.
  const Check checks[] = {
      {"gate.burst_s", workload.gate_burst_s, "burst_s (paper seconds)", workload.gate_burst_s,
       kMinGateBurstS, kMaxGateBurstS, ""},
      {"upstream.limits (requests per s x gate.cap_factor)", requests, "requests_per_s",
       caps.requests_per_s, kMinGateRpm / 60, kMaxGateRpm / 60, " (0.001 to 1e9 rpm)"},
      {"upstream.limits (tokens per s x gate.cap_factor)", tokens, "tokens_per_s",
       caps.tokens_per_s, 0, kMaxGateTpm / 60, " (0 to 1e12 tpm)"},
      {"upstream.limits (the largest requests limit)", caps.max_cost_requests, "max_cost_requests",
       caps.max_cost_requests, 0, kMaxGateCostRequests, ""},
      {"upstream.limits (the largest tokens limit)", caps.max_cost_tokens, "max_cost_tokens",
       caps.max_cost_tokens, 0, kMaxGateCostTokens, ""},
  };
  for (const Check& c : checks) {
    if (c.value >= c.min && c.value <= c.max) continue;
    return Status::InvalidArgument(
        workload.source + ": " + c.field + ": " + FormatShort(c.given) + " gives the gate a " +
        c.name + " of " + FormatShort(c.value) + at + ", must be in [" + FormatShort(c.min) + ", " +
        FormatShort(c.max) + "]" + c.unit + " (bp/gate_ranges.h, as bpctl)");
  }
  return Status::Ok();
}

}  // namespace bp::loadgen
