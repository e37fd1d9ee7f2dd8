// bpctl admit: ask the gate as a worker would (admit.lua) and print the
// decision. With --dry-run the same script runs on a scratch copy of the
// target's keys (bp::GateAdmin::DryRunAdmit), so the answer is exactly what the
// worker would get now and the target is left unchanged.
#include <nlohmann/json.hpp>

#include "bp/bpctl/values.h"
#include "cli_internal.h"

namespace bp::bpctl {
namespace {

constexpr int64_t kMaxCount = int64_t{1} << 53;  // exact in the script's doubles

constexpr int64_t kMaxAdmitPriority = 1'000'000;

// The flag's integer, or `fallback` when absent.
Result<int64_t> IntegerFlag(const Invocation& in, const char* flag, int64_t fallback, int64_t min,
                            int64_t max = kMaxCount) {
  if (!in.Has(flag)) return fallback;
  return ParseInteger(in.Flag(flag), std::string("--") + flag, min, max);
}

int Admit(const Invocation& in) {
  if (!in.Has("tenant")) {
    in.env.err << "bpctl: admit: --tenant is required\n";
    return kExitUsage;
  }
  auto tenant = ParseTenant(in.Flag("tenant"), "--tenant");
  if (!tenant.ok()) return in.env.Fail(tenant.status());
  AdmitRequest req;
  req.tenant = *tenant;
  const std::string mode_name = in.Has("mode") ? in.Flag("mode") : "reconcile";
  const auto mode = ParseGateMode(mode_name);
  if (!mode) {  // a word from a fixed list: usage (exit 2), as an unknown flag
    return in.env.Fail(
        kExitUsage, std::string("--mode: must be ") + kGateModeNames + ", got '" + mode_name + "'");
  }
  // The gate's priority is an int: a larger --priority is refused here
  // rather than silently turned into another class.
  auto priority = IntegerFlag(in, "priority", 1, 1, kMaxAdmitPriority);
  auto requests = IntegerFlag(in, "requests", 1, 0);
  auto tokens = IntegerFlag(in, "tokens", 0, 0);
  auto max_tokens = IntegerFlag(in, "max-tokens", 0, 0);
  auto now_ms = IntegerFlag(in, "now-ms", 0, 0);
  for (const auto* r : {&priority, &requests, &tokens, &max_tokens, &now_ms}) {
    if (!r->ok()) return in.env.Fail(r->status());
  }
  req.priority = static_cast<int>(*priority);
  req.cost = Cost{*requests, *tokens};
  req.max_tokens = *max_tokens;
  req.now_ms = *now_ms;
  auto gate = in.env.Connect(*mode);
  if (!gate) return kExitServer;
  const bool dry = in.Has("dry-run");
  const Decision d = dry ? gate->DryRunAdmit(req) : gate->gate().Admit(req);
  if (d.verdict == Verdict::kFailOpen) {
    return in.env.Fail(kExitServer, "admit: no decision (a worker would fail open): " + d.reason);
  }
  if (in.Has("json")) {
    nlohmann::ordered_json j = {{"verdict", VerdictName(d.verdict)}, {"dry_run", dry}};
    if (d.verdict == Verdict::kAdmit && !dry) j["ticket"] = d.ticket;
    if (d.verdict == Verdict::kDefer) j["delta_ms"] = d.delta_ms;
    if (!d.reason.empty()) j[d.verdict == Verdict::kDefer ? "binding" : "reason"] = d.reason;
    in.env.out << j.dump() << "\n";
    return kExitOk;
  }
  std::ostream& o = in.env.out;
  o << VerdictName(d.verdict);
  if (d.verdict == Verdict::kAdmit && !dry) o << " ticket " << d.ticket;
  if (d.verdict == Verdict::kDefer) o << " " << d.delta_ms << " ms (binding: " << d.reason << ")";
  if (d.verdict == Verdict::kReject) o << ": " << d.reason;
  o << (dry ? "   [dry run: nothing changed]\n" : "\n");
  return kExitOk;
}

void AdmitFlags(po::options_description& d) {
  const std::string priority =
      "priority class, 1 = highest, at most " + std::to_string(kMaxAdmitPriority) + " (default 1)";
  d.add_options()("tenant", po::value<std::string>()->value_name("T"),
                  "tenant id, [A-Za-z0-9_.-]{1,128} (required)")(
      "priority", po::value<std::string>()->value_name("K"), priority.c_str())(
      "requests", po::value<std::string>()->value_name("N"), "requests, integer >= 0 (default 1)")(
      "tokens", po::value<std::string>()->value_name("N"),
      "estimated prompt tokens, integer >= 0 (default 0)")(
      "max-tokens", po::value<std::string>()->value_name("M"),
      "completion upper bound, integer >= 0 (debited in reservation mode; default 0)")(
      "mode", po::value<std::string>()->value_name("MODE"),
      "estimate, reconcile (default) or reservation")(
      "dry-run", "decide on a scratch copy of the target: nothing changes")(
      "json", "print the decision as JSON")(
      "now-ms", po::value<std::string>()->value_name("MS"),
      "tests only: the script's clock in epoch ms (default 0: server TIME)");
}

}  // namespace

std::vector<Command> AdmitCommands() {
  return {
      {"admit",
       "--tenant T [--priority K] [--requests N] [--tokens N]\n"
       "       [--max-tokens M] [--mode MODE] [--dry-run] [--json]",
       "ask the gate as a worker would and print the decision",
       "Prints ADMIT ticket N, DEFER <delta> ms (binding: fair | l1:requests |\n"
       "l1:tokens) or REJECT: <reason>. A real admission debits the buckets and counts\n"
       "in the queue like a worker's; its ticket is not released (it expires after\n"
       "ticket_ttl_ms). --dry-run runs the same script on a scratch copy of the target's\n"
       "keys, deleted afterwards: the decision is the one a worker would get now, and\n"
       "the target is unchanged.\n\n"
       "Examples:\n"
       "  bpctl admit --tenant acme --priority 1 --requests 1 --tokens 400 --dry-run\n"
       "  bpctl admit --tenant acme --tokens 100 --max-tokens 300 --mode reservation\n",
       {},
       AdmitFlags,
       Admit},
  };
}

}  // namespace bp::bpctl
