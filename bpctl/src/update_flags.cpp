// The flags of `set cap` and `set adapt` and the help texts that name their
// ranges and defaults (cli_internal.h).
#include <string>

#include "bp/decimal.h"
#include "bp/gate_ranges.h"
#include "cli_internal.h"

namespace bp::bpctl {

// The ranges and defaults in help texts come from bp/gate_ranges.h, written
// as the flags take them (plain decimals: the strict parser reads no
// exponent), so a help text cannot drift from the check.
namespace {

std::string Plain(double v) { return FormatNumber(v, 17, Notation::kPlain); }
// "24 h" for 86400000 ms.
std::string Hours(double ms) { return Plain(ms / 3'600'000) + " h"; }

}  // namespace

std::string TypedRange(const NumberRange& range) { return RangeText(range, Notation::kPlain); }

void AdaptFlags(po::options_description& d) {
  const std::string beta = "multiplicative decrease, in " + TypedRange(kGateAdaptBetaRange) +
                           " (default " + Plain(kDefaultGateAdaptBeta) + ")";
  const std::string recover = "additive recovery: 0 to the configured cap in MS, in " +
                              TypedRange(kGateAdaptRecoverMsRange) + " (" +
                              Hours(kGateAdaptRecoverMsRange.max) + "; default " +
                              Plain(kDefaultGateAdaptRecoverMs) + ")";
  const std::string window = "count window and least hold after a decrease, in " +
                             TypedRange(kGateAdaptWindowMsRange) + " (" +
                             Hours(kGateAdaptWindowMsRange.max) + "; default " +
                             Plain(kDefaultGateAdaptWindowMs) + ")";
  const std::string min_429 = "429s within one window before a decrease, an integer in [1, " +
                              std::to_string(kMaxGateAdaptMin429) + "] (default " +
                              std::to_string(kDefaultGateAdaptMin429) + ")";
  d.add_options()("beta", po::value<std::string>()->value_name("B"), beta.c_str())(
      "recover-ms", po::value<std::string>()->value_name("MS"), recover.c_str())(
      "window-ms", po::value<std::string>()->value_name("MS"), window.c_str())(
      "min-429", po::value<std::string>()->value_name("N"), min_429.c_str());
}

void CapFlags(po::options_description& d) {
  const std::string rpm = "requests per minute, in " + TypedRange({kMinGateRpm, kMaxGateRpm}) +
                          " (the cap is N/60 per second)";
  const std::string tpm = "tokens per minute, in " + TypedRange({0, kMaxGateTpm}) +
                          " (N/60 per second; 0: no token cap)";
  const std::string burst =
      "L1 burst in seconds of cap, in " + TypedRange({kMinGateBurstS, kMaxGateBurstS}) +
      " (capacity = cap * S; a new target's default " + Plain(kDefaultGateBurstS) + ")";
  const std::string max_requests =
      "largest admissible requests per call (the provider's limit per window), 0 or in [1, " +
      Plain(kMaxGateCostRequests) + "]; 0: RPM";
  const std::string max_tokens =
      "largest admissible tokens per call (the provider's limit per window), 0 or in [1, " +
      Plain(kMaxGateCostTokens) + "]; 0: TPM";
  d.add_options()("rpm", po::value<std::string>()->value_name("N"), rpm.c_str())(
      "tpm", po::value<std::string>()->value_name("N"), tpm.c_str())(
      "burst-s", po::value<std::string>()->value_name("S"), burst.c_str())(
      "max-cost-requests", po::value<std::string>()->value_name("N"), max_requests.c_str())(
      "max-cost-tokens", po::value<std::string>()->value_name("N"), max_tokens.c_str());
}

}  // namespace bp::bpctl
