// bpctl hot updates (I2): set cap, set priority-weights, set weight,
// unset weight, set adapt, reset and import. Every value is validated before the
// connection is opened, and each update is one atomic configure.lua call, so
// invalid input changes nothing and workers see the change on their next call.
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <iterator>
#include <optional>
#include <sstream>
#include <tuple>

#include "bp/bpctl/values.h"
#include "bp/gate_config_json.h"
#include "cli_internal.h"

namespace bp::bpctl {
namespace {

std::string CapsText(const GateCaps& c) {
  std::string s =
      FormatNumber(c.requests_per_s) + " req/s (" + FormatNumber(c.requests_per_s * 60) + " rpm), ";
  s += c.tokens_per_s > 0 ? FormatNumber(c.tokens_per_s) + " tok/s (" +
                                FormatNumber(c.tokens_per_s * 60) + " tpm), "
                          : "no token cap, ";
  s += "burst " + FormatNumber(c.burst_s) + " s";
  if (c.max_cost_requests > 0) s += ", max cost " + FormatNumber(c.max_cost_requests) + " requests";
  if (c.max_cost_tokens > 0) s += ", max cost " + FormatNumber(c.max_cost_tokens) + " tokens";
  return s;
}

int SetCap(const Invocation& in) {
  if (!in.Has("rpm") && !in.Has("tpm") && !in.Has("burst-s") && !in.Has("max-cost-requests") &&
      !in.Has("max-cost-tokens")) {
    in.env.err << "bpctl: set cap: give at least one of --rpm, --tpm, --burst-s, "
                  "--max-cost-requests, --max-cost-tokens\n";
    return kExitUsage;
  }
  std::optional<double> rpm, tpm, burst, max_requests, max_tokens;
  if (in.Has("rpm")) {
    auto v = ParseInRange(in.Flag("rpm"), "--rpm", kMinGateRpm, kMaxGateRpm);
    if (!v.ok()) return in.env.Fail(v.status());
    rpm = *v;
  }
  if (in.Has("tpm")) {
    auto v = ParseInRange(in.Flag("tpm"), "--tpm", 0, kMaxGateTpm);
    if (!v.ok()) return in.env.Fail(v.status());
    tpm = *v;
  }
  if (in.Has("burst-s")) {
    auto v = ParseInRange(in.Flag("burst-s"), "--burst-s", kMinGateBurstS, kMaxGateBurstS);
    if (!v.ok()) return in.env.Fail(v.status());
    burst = *v;
  }
  // 0 (the default) or at least 1: a fraction would REJECT every call of one
  // request or one token.
  for (auto [flag, out, max] :
       {std::tuple{"max-cost-requests", &max_requests, kMaxGateCostRequests},
        std::tuple{"max-cost-tokens", &max_tokens, kMaxGateCostTokens}}) {
    if (!in.Has(flag)) continue;
    const std::string text = in.Flag(flag);
    const auto v = ParseDecimal(text);
    if (!v || (*v != 0 && !InRange(*v, NumberRange{1, max}))) {
      return in.env.Fail(Status::InvalidArgument(
          std::string("--") + flag + ": must be 0 (the default) or a number in " +
          RangeText(NumberRange{1, max}, Notation::kPlain) + ", got '" + text + "'"));
    }
    *out = *v;
  }
  auto gate = in.env.Connect();
  if (!gate) return kExitServer;
  if (int rc = RequireExistingTarget(in, "set cap"); rc >= 0) return rc;
  GateCaps caps;  // omitted flags keep the current values
  if (!rpm || !tpm || !burst || !max_requests || !max_tokens) {
    auto current = gate->Config();
    if (!current.ok()) return in.env.Fail(current.status());
    if (!current->configured && !rpm) {
      in.env.err << "bpctl: set cap: target " << in.env.target << " has no caps yet: give --rpm\n";
      return kExitUsage;
    }
    if (current->configured) caps = current->caps;
    if (!current->configured) caps.tokens_per_s = 0;
  }
  if (rpm) caps.requests_per_s = *rpm / 60;
  if (tpm) caps.tokens_per_s = *tpm / 60;
  if (burst) caps.burst_s = *burst;
  if (max_requests) caps.max_cost_requests = *max_requests;
  if (max_tokens) caps.max_cost_tokens = *max_tokens;
  if (Status s = gate->SetCaps(caps); !s.ok()) return in.env.Fail(s);
  in.env.out << "target " << in.env.target << ": caps " << CapsText(caps) << "\n";
  return kExitOk;
}

int SetPriorityWeights(const Invocation& in) {
  auto omega = ParsePriorityWeights(in.args[0]);
  if (!omega.ok()) return in.env.Fail(omega.status());
  auto gate = in.env.Connect();
  if (!gate) return kExitServer;
  if (int rc = RequireExistingTarget(in, "set priority-weights"); rc >= 0) return rc;
  if (Status s = gate->SetPriorityWeights(*omega); !s.ok()) return in.env.Fail(s);
  in.env.out << "target " << in.env.target << ": priority weights";
  for (size_t k = 0; k < omega->size(); ++k) {
    // Plain decimals, as the flag takes them: the echo can be typed back.
    in.env.out << (k ? ", " : " ") << "omega_" << k + 1 << " = "
               << FormatNumber((*omega)[k], 17, Notation::kPlain);
  }
  in.env.out << "\n";
  return kExitOk;
}

int SetWeight(const Invocation& in) {
  auto tenant = ParseTenant(in.args[0], "TENANT");
  if (!tenant.ok()) return in.env.Fail(tenant.status());
  auto weight = ParseInRange(in.args[1], "weight W", kMinGateWeight, kMaxGateWeight);
  if (!weight.ok()) return in.env.Fail(weight.status());
  auto gate = in.env.Connect();
  if (!gate) return kExitServer;
  if (int rc = RequireExistingTarget(in, "set weight"); rc >= 0) return rc;
  if (Status s = gate->SetTenantWeight(*tenant, *weight); !s.ok()) return in.env.Fail(s);
  in.env.out << "target " << in.env.target << ": tenant " << *tenant << " weight "
             << FormatNumber(*weight, 17, Notation::kPlain) << "\n";  // as typed: "1000000", not "1e+06"
  return kExitOk;
}

int UnsetWeight(const Invocation& in) {
  auto tenant = ParseTenant(in.args[0], "TENANT");
  if (!tenant.ok()) return in.env.Fail(tenant.status());
  auto gate = in.env.Connect();
  if (!gate) return kExitServer;
  auto config = gate->Config();
  if (!config.ok()) return in.env.Fail(config.status());
  if (config->tenant_weights.count(*tenant) == 0) {
    return in.env.Fail(kExitBadValue, "unset weight: tenant " + *tenant +
                                          " has no weight set in target " + in.env.target);
  }
  if (Status s = gate->UnsetTenantWeight(*tenant); !s.ok()) return in.env.Fail(s);
  in.env.out << "target " << in.env.target << ": tenant " << *tenant
             << " weight unset (back to 1)\n";
  return kExitOk;
}

int Reset(const Invocation& in) {
  if (in.Has("buckets") + in.Has("all") + in.Has("learned") > 1) {
    in.env.err << "bpctl: reset: --buckets, --all and --learned exclude each other\n";
    return kExitUsage;
  }
  auto gate = in.env.Connect();
  if (!gate) return kExitServer;
  if (in.Has("learned")) {
    if (Status s = gate->ResetLearned(); !s.ok()) return in.env.Fail(s);
    in.env.out << "target " << in.env.target
               << ": learned caps dropped (the configured caps apply)\n";
    return kExitOk;
  }
  const bool all = in.Has("all");
  if (Status s = all ? gate->Reset() : gate->ResetBuckets(); !s.ok()) return in.env.Fail(s);
  in.env.out << "target " << in.env.target
             << (all ? ": every key deleted (configuration included)\n"
                     : ": bucket and queue state dropped, configuration kept\n");
  return kExitOk;
}

int SetAdapt(const Invocation& in) {
  const std::string& mode = in.args[0];
  if (mode != "on" && mode != "off") {  // a word from a fixed list: usage, as admit --mode
    return in.env.Fail(kExitUsage, "set adapt: MODE must be on or off, got '" + mode + "'");
  }
  // Every flag is checked here, before connecting (as the other commands
  // do), against its documented range (values.h: kAdapt*), which lies inside
  // ValidateGateConfig's rule.
  std::optional<double> beta, recover, window;
  std::optional<int64_t> min429;
  for (auto [flag, out, range] : {std::tuple{"beta", &beta, kGateAdaptBetaRange},
                                  std::tuple{"recover-ms", &recover, kGateAdaptRecoverMsRange},
                                  std::tuple{"window-ms", &window, kGateAdaptWindowMsRange}}) {
    if (!in.Has(flag)) continue;
    auto v = ParseNumberIn(in.Flag(flag), std::string("--") + flag, range);
    if (!v.ok()) return in.env.Fail(v.status());
    *out = *v;
  }
  if (in.Has("min-429")) {
    auto v = ParseInteger(in.Flag("min-429"), "--min-429", 1, kMaxGateAdaptMin429);
    if (!v.ok()) return in.env.Fail(v.status());
    min429 = *v;
  }
  auto gate = in.env.Connect();
  if (!gate) return kExitServer;
  if (int rc = RequireExistingTarget(in, "set adapt"); rc >= 0) return rc;
  auto config = gate->Config();  // the other tuning fields keep their values
  if (!config.ok()) return in.env.Fail(config.status());
  GateTuning t = config->tuning;
  t.adapt = mode == "on";
  if (beta) t.adapt_beta = *beta;
  if (recover) t.adapt_recover_ms = *recover;
  if (window) t.adapt_window_ms = *window;
  if (min429) t.adapt_min_429 = *min429;
  if (Status s = gate->SetTuning(t); !s.ok()) return in.env.Fail(s);
  in.env.out << "target " << in.env.target << ": adaptive caps " << mode;
  if (t.adapt) {
    in.env.out << " (beta " << FormatNumber(t.adapt_beta) << ", recovery "
               << FormatNumber(t.adapt_recover_ms) << " ms, window "
               << FormatNumber(t.adapt_window_ms) << " ms, " << t.adapt_min_429
               << " 429s per window)";
  } else {
    in.env.out << " (learned caps dropped)";
  }
  in.env.out << "\n";
  return kExitOk;
}

// All of `stream` (`stream << rdbuf()` fails on empty input; empty input is
// a bad value, not an OS error); nullopt when reading fails.
std::optional<std::string> ReadAll(std::istream& stream) {
  std::string text((std::istreambuf_iterator<char>(stream)), std::istreambuf_iterator<char>());
  if (stream.bad()) return std::nullopt;
  return text;
}

int Import(const Invocation& in) {
  // FILE "-" is standard input (`bpctl export | bpctl --target b import -`),
  // read to its end before anything is validated or written, as a file.
  const bool from_stdin = in.args[0] == "-";
  const std::string path = from_stdin ? "stdin" : in.args[0];
  std::optional<std::string> text;
  if (from_stdin) {
    text = ReadAll(in.env.context.in ? *in.env.context.in : std::cin);
    if (!text) return in.env.Fail(kExitFile, "stdin: cannot read");
  } else {
    std::error_code ec;
    if (std::filesystem::is_directory(path, ec)) {
      return in.env.Fail(kExitFile, path + ": is a directory");
    }
    std::ifstream file(path, std::ios::binary);
    if (!file) return in.env.Fail(kExitFile, path + ": cannot read: " + std::strerror(errno));
    text = ReadAll(file);
    if (!text) return in.env.Fail(kExitFile, path + ": cannot read: " + std::strerror(errno));
  }
  auto j = ParseGateConfigText(*text);
  if (!j.ok()) return in.env.Fail(kExitBadValue, path + ": " + j.status().message());
  auto config = GateConfigFromJson(*j);  // the whole file, before anything is written
  if (!config.ok()) return in.env.Fail(kExitBadValue, path + ": " + config.status().message());
  auto gate = in.env.Connect();
  if (!gate) return kExitServer;
  if (int rc = RequireExistingTarget(in, "import"); rc >= 0) return rc;
  if (Status s = gate->ReplaceConfig(*config); !s.ok()) return in.env.Fail(s);
  in.env.out << "target " << in.env.target << ": imported " << path << ": caps "
             << CapsText(config->caps) << ", " << config->omega.size() << " priority class(es), "
             << config->tenant_weights.size() << " tenant weight(s)\n";
  return kExitOk;
}

void ResetFlags(po::options_description& d) {
  d.add_options()("buckets", "drop bucket and queue state, keep the configuration (default)")(
      "all", "delete every key of the target, configuration included")(
      "learned", "drop only the learned caps of the adaptive rule");
}

}  // namespace

std::vector<Command> UpdateCommands() {
  return {
      {"set cap",
       "[--rpm N] [--tpm N] [--burst-s S] [--max-cost-requests N] [--max-cost-tokens N]",
       "set the caps (L1) from RPM/TPM",
       "Sets the L1 caps C_d = RPM/60 and TPM/60 per second and the burst, in one atomic\n"
       "update; the next admission of every worker uses them. Omitted flags keep their\n"
       "current value (a target without caps needs --rpm). The max costs are the largest\n"
       "call the provider serves (its limit per window); a larger call is REJECTed, a call\n"
       "above the burst but within them is admitted into debt. 0 = one minute of cap.\n\n"
       "Examples:\n"
       "  bpctl set cap --rpm 3600 --tpm 720000             # 60 req/s, 12000 tok/s\n"
       "  bpctl set cap --rpm 3600 --tpm 720000 --burst-s 0.1\n"
       "  bpctl set cap --max-cost-tokens 12000             # 1 s windows of 12000 tokens\n"
       "  bpctl --target prod set cap --tpm 600000          # only the token cap\n",
       {},
       CapFlags,
       SetCap},
      {"set priority-weights",
       "LIST",
       "set omega_1..omega_K (L2 class weights)",
       "LIST is omega_1,omega_2,...: one number in " +
           TypedRange({kMinGateWeight, kMaxGateWeight}) +
           " per priority class\n(1 = highest), at most " + std::to_string(kMaxGateClasses) +
           ". Classes beyond the list are removed (omega 1).\n\n"
           "Examples:\n"
           "  bpctl set priority-weights 0.5,0.3,0.2\n"
           "  bpctl set priority-weights 1\n",
       {"LIST"},
       nullptr,
       SetPriorityWeights},
      {"set weight",
       "TENANT W",
       "set a tenant's weight w_t",
       "TENANT is [A-Za-z0-9_.-], 1-128 bytes; W a number in " +
           TypedRange({kMinGateWeight, kMaxGateWeight}) +
           " (default 1).\n"
           "The tenant's queues get w_t * omega_k of the backlogged weight.\n\n"
           "Examples:\n"
           "  bpctl set weight acme 2\n"
           "  bpctl --target prod set weight tenant-7 0.5\n",
       {"TENANT", "W"},
       nullptr,
       SetWeight},
      {"unset weight",
       "TENANT",
       "remove a tenant's weight (back to 1)",
       "Deletes the tenant's explicit weight; an error (exit 3) if it has none.\n\n"
       "Examples:\n"
       "  bpctl unset weight acme\n",
       {"TENANT"},
       nullptr,
       UnsetWeight},
      {"set adapt",
       "on|off [--beta B] [--recover-ms MS] [--window-ms MS] [--min-429 N]",
       "adaptive caps on or off (docs/gate.md, \"Adaptive caps\")",
       "on: the gate learns a cap per dimension from the 429s that workers report at\n"
       "release (AIMD: times beta once per overload episode, back to the configured cap\n"
       "over recover-ms) and uses it for L1 and equation (1), never above the configured\n"
       "cap. off (the default, the paper's gate): the learned caps are dropped. Omitted\n"
       "flags keep their current value. `bpctl status` shows configured vs learned.\n\n"
       "Examples:\n"
       "  bpctl set adapt on\n"
       "  bpctl set adapt on --beta 0.5 --recover-ms 60000 --min-429 5\n"
       "  bpctl set adapt off\n",
       {"MODE"},
       AdaptFlags,
       SetAdapt},
      {"reset",
       "[--buckets | --all | --learned]",
       "drop bucket/queue state (or everything)",
       "--buckets (the default) drops the L1 levels, tags, backlog, per-queue and\n"
       "per-class counters and outstanding tickets atomically, and keeps caps, weights\n"
       "and tuning: the next admission starts from full buckets. --all deletes every\n"
       "key of the target: workers fail open until caps are set again. --learned drops\n"
       "only the learned caps of the adaptive rule (the configured caps apply at once).\n\n"
       "Examples:\n"
       "  bpctl reset\n"
       "  bpctl --target bench-run-3 reset --all\n"
       "  bpctl reset --learned\n",
       {},
       ResetFlags,
       Reset},
      {"import",
       "FILE",
       "replace the configuration with an export",
       "Reads FILE (the format of `bpctl export`; - reads standard input to its end),\n"
       "validates all of it, then replaces the target's caps, priority weights, tenant\n"
       "weights and tuning in one atomic update: tenant weights and classes absent from\n"
       "FILE are removed. Bucket and queue state are kept. An unreadable file is exit 5,\n"
       "invalid content exit 3; either way nothing is written.\n\n"
       "Examples:\n"
       "  bpctl --target prod import gate.json\n"
       "  bpctl --target staging export > s.json && bpctl --target prod import s.json\n"
       "  bpctl --target staging export | bpctl --target prod import -\n",
       {"FILE"},
       nullptr,
       Import},
  };
}

}  // namespace bp::bpctl
