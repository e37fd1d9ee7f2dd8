// loadgen's flags (cli.h): the option table, each flag's range check and
// the checks between flags. Files are opened by cli_run.cpp.
#include <boost/lexical_cast.hpp>
#include <boost/program_options.hpp>
#include <charconv>
#include <cmath>
#include <cstdint>
#include <sstream>
#include <string>
#include <vector>

#include "bp/gate.h"
#include "bp/loadgen/cli.h"
#include "bp/loadgen/configurations.h"
#include "bp/loadgen/shard.h"
#include "cli_internal.h"

namespace po = boost::program_options;

namespace bp::loadgen {
namespace {

constexpr const char* kExamples = R"(Examples:
  # cross-priority under all four configurations, 10x faster than paper time
  loadgen --workload configs/workloads/cross-priority.json \
          --config naive,tn,litellm,bp --speedup 10 \
          --upstream http://127.0.0.1:8080 --valkey redis://127.0.0.1:6379 --out results

  # token-bound, 3 repeats, with the ablations
  loadgen --workload configs/workloads/token-bound.json \
          --config bp,bp-no-drf,bp-no-priority --repeats 3 --speedup 5 --out results

  # a scenario (timed events); state_outage events need the Valkey server's pid
  loadgen --workload configs/scenarios/state-outage.json --config naive,bp --speedup 5 \
          --valkey-pid 12345

  # two workloads in one go (adds results/comparison.md)
  loadgen --workload configs/workloads/request-bound.json \
          --workload configs/workloads/mixed-dominant.json --config naive,bp

  # the fleet as 3 cooperating processes (one gate target, tenants split, one report)
  loadgen --workload configs/workloads/cross-priority.json --config bp --processes 3

  # the same by hand: each process its shard, the same start, then the merge
  T=$(( $(date +%s%3N) + 3000 ))
  loadgen -w W.json -c bp --shard 0/2 --start-at $T --gate-target fleet1 --out shards &
  loadgen -w W.json -c bp --shard 1/2 --start-at $T --gate-target fleet1 --out shards
  wait; loadgen merge --out results shards

A --workload that is not a file and has no '/' is a shipped name: NAME.json in
workloads/ or scenarios/ under $BP_CONFIG_DIR, the installed share/backpressure/configs,
or this source tree's configs/ (e.g. --workload cross-priority, --workload join-leave).

When the runs end (also on a failure or Ctrl-C), loadgen PUTs back the configuration
it found on mockapi (GET /admin/config before the first run); --shard parts leave it.

Exit codes: 0 every run finished (activities may still have failed: table.md counts
them); 1 a run could not go on: mockapi or Valkey unreachable or refusing the workload's
configuration, a results file not writable, a process of --processes failing (runs
finished before it keep their folders; no comparison is written); 2 bad usage or a bad
workload file, found before any run starts (nothing is sent anywhere); 130 / 143
stopped by SIGINT / SIGTERM (after restoring mockapi's configuration).
)";

// An integer flag's text: one decimal integer (no sign for unsigned types,
// no fraction, no exponent) in [lo, hi]. Otherwise false with `error`:
// "--F must be in [LO, HI]UNIT, got X" for an integer out of range (the
// wording of ValidateRunOptions), "--F must be an integer in [LO, HI]UNIT, got
// 'X'" for anything else (Boost's own "the argument ('X') for option '--F' is
// invalid" named no range).
template <typename T>
bool IntegerFlag(const std::string& flag, const std::string& text, T lo, T hi,
                 const std::string& unit, T* out, std::string* error) {
  const std::string range = "[" + std::to_string(lo) + ", " + std::to_string(hi) + "]" + unit;
  T v{};
  const char* end = text.data() + text.size();
  auto [p, ec] = std::from_chars(text.data(), end, v);
  if (ec == std::errc() && p == end && !text.empty()) {
    if (v >= lo && v <= hi) {
      *out = v;
      return true;
    }
    *error = "--" + flag + " must be in " + range + ", got " + text;
    return false;
  }
  *error = "--" + flag + " must be an integer in " + range + ", got '" + text + "'";
  return false;
}


CliParse UsageError(const std::string& text) {
  CliParse p;
  p.kind = CliParse::Kind::kUsage;
  p.text = text;
  return p;
}

}  // namespace

CliParse ParseLoadgenArgs(const std::vector<std::string>& args, int64_t now_unix_ms) {
  CliParse parse;
  CliPlan& plan = parse.plan;
  RunOptions& run = plan.run;
  cli_internal::FileArgs files;
  std::string config_list = "naive,tn,litellm,bp";
  // Integer flags are read as text and checked here (IntegerFlag).
  std::string repeats_text = "1", seed_text = "1", threads_text = "4", breaker_text = "1000",
              timeout_text = "100", ahead_text = "200", pid_text = "0", processes_text = "1",
              start_text, speedup_text = "1", tn_rps_text = "0";
  bool no_figures = false;
  bool quiet = false;
  std::string sdk_bound = "inclusive";
  std::string litellm_limiter = "v3";
  std::string litellm_tokens = "output";
  std::string litellm_stream = "counted";
  std::string shard_text;

  po::options_description desc("loadgen: a multi-tenant workflow-engine load generator\nOptions");
  desc.add_options()("help,h", "show this help")(
      "workload,w", po::value(&files.workloads)->composing(),
      "workload JSON file or shipped name (cross-priority, join-leave, ...; repeatable)")(
      "config,c", po::value(&config_list)->default_value(config_list),
      "comma list of naive,tn,litellm,bp,bp-no-drf,bp-no-priority")(
      "repeats,r", po::value(&repeats_text)->default_value(repeats_text),
      "repeats per configuration, in [1, 1000]")(
      "speedup,s", po::value(&speedup_text)->default_value(speedup_text),
      "time compression in (0, 1000]: rates x F, durations / F; results stay in paper units")(
      "upstream,u", po::value(&run.upstream_url)->default_value(run.upstream_url), "mockapi URL")(
      "valkey,v", po::value(&run.valkey_url)->default_value(run.valkey_url),
      "Valkey/Redis URL (bp)")(
      "out,o", po::value(&plan.out_dir)->default_value(plan.out_dir), "results directory")(
      "seed", po::value(&seed_text)->default_value(seed_text),
      "jitter seed (the run uses seed + repeat)")(
      "gate-threads", po::value(&threads_text)->default_value(threads_text),
      "bp: threads/connections for the blocking gate calls, in [1, 256]")(
      "gate-timeout-ms", po::value(&timeout_text)->default_value(timeout_text),
      "bp: real ms a gate call may take (connect included) before it fails open, the call "
      "going ungated; in [1, 60000]")(
      "admit-ahead-ms", po::value(&ahead_text)->default_value(ahead_text),
      "bp: paper ms a worker will wait before its upstream call when the gate admits it ahead "
      "of the bucket's refill (in its slot within the dispatch latency, else on a durable "
      "timer), instead of a DEFER and a new Admit; the gate "
      "admits at most four refills of the call's own cost ahead; in [0, 60000] (0 = never "
      "admitted ahead)")(
      "gate-breaker-ms", po::value(&breaker_text)->default_value(breaker_text),
      "bp: after a gate call times out or loses its connection, that thread's calls fail open "
      "at once for this many real ms, then one probes Valkey; in [0, 60000] (0 = no circuit "
      "breaker; longer would leave most of a run ungated after one pause)")(
      "no-figures", po::bool_switch(&no_figures), "do not run gnuplot")(
      "sdk-retry-after-bound", po::value(&sdk_bound)->default_value(sdk_bound),
      "inclusive: the SDK honours retry-after 0 < t <= 60 s (official SDKs); exclusive: "
      "0 < t < 60 s (openai-node <= 6.25), so LiteLLM's retry-after 60 falls back to backoff")(
      "valkey-pid", po::value(&pid_text)->default_value(pid_text),
      "scenarios: pid of the Valkey server that state_outage events pause (SIGSTOP/SIGCONT) "
      "or stop and restart (same executable, settings read by CONFIG GET); loadgen must be "
      "allowed to signal it")(
      "valkey-pidfile", po::value(&run.valkey_pidfile),
      "scenarios: like --valkey-pid, read from this file at each outage (a server started with "
      "--pidfile FILE writes its new pid there after a restart)")(
      "litellm-limiter", po::value(&litellm_limiter)->default_value(litellm_limiter),
      "litellm: v3 (current LiteLLM: window from the first request, retry-after 60) or v1 "
      "(clock minutes, retry-after to the next minute)")(
      "litellm-tpm", po::value(&litellm_tokens)->default_value(litellm_tokens),
      "litellm v3 token counter: output (completion tokens, LiteLLM's default) or total")(
      "litellm-stream-usage", po::value(&litellm_stream)->default_value(litellm_stream),
      "litellm: counted (a streamed call's usage corrects TPM like a plain call's, as LiteLLM "
      "documents) or uncounted (streamed calls never reach TPM: BerriAI/litellm#41610)")(
      "tn-rps-limit", po::value(&tn_rps_text)->default_value(tn_rps_text),
      "tn: Temporal queue-rps-limit in paper req/s, >= 0 (0: the workload's request cap)")(
      "quiet,q", po::bool_switch(&quiet),
      "no progress line, gate target line or start wait line (warnings, errors and scenario "
      "event lines stay, on stderr)")(
      "processes", po::value(&processes_text)->default_value(processes_text),
      "run each run as N cooperating processes, N in [1, 256] (tenant t in process t mod N, slots "
      "split, one gate target and upstream, set up once, one start time); records merged into "
      "one report")(
      "shard", po::value(&shard_text),
      "I/N: run only part I of N of one run and write its records to "
      "OUT/<workload>/<config>/r0/shard-I.records.json for `loadgen merge`; part 0 sets up the "
      "upstream and the gate; needs --start-at (and --gate-target for bp)")(
      "start-at", po::value(&start_text),
      "--shard: the shared start, wall clock in unix ms within 1 h of now (leave part 0 a few "
      "seconds for setup; a start ahead prints how long it waits)")(
      "gate-target", po::value(&run.gate_target),
      "--shard: the gate target the parts share (bp configurations)")(
      "gate-config", po::value(&files.gate_config),
      "bp: the gate target's declared configuration (the JSON of `bpctl export`, caps in "
      "real units): written at the start and re-seeded by the gate clients if the store loses "
      "its state; default: derived from the workload (docs/store-restart.md)");

  po::variables_map vm;
  try {
    // No positional arguments: a stray word is an error, not ignored.
    po::store(po::command_line_parser(args)
                  .options(desc)
                  .positional(po::positional_options_description())
                  .run(),
              vm);
    po::notify(vm);
  } catch (const po::error& e) {
    return UsageError(e.what());
  }
  if (vm.count("help")) {
    std::ostringstream help;
    help << desc << "\n" << kExamples;
    parse.kind = CliParse::Kind::kHelp;
    parse.text = help.str();
    return parse;
  }
  if (files.workloads.empty()) return UsageError("--workload FILE is required");
  {
    std::string e;
    const bool ok =
        IntegerFlag<int>("repeats", repeats_text, 1, 1000, "", &plan.repeats, &e) &&
        IntegerFlag<uint64_t>("seed", seed_text, 0, UINT64_MAX, "", &run.seed, &e) &&
        IntegerFlag<int>("gate-threads", threads_text, 1, 256, "", &run.gate_threads, &e) &&
        IntegerFlag<int>("gate-timeout-ms", timeout_text, 1, kMaxGateTimeoutMs, " ms",
                         &run.gate_command_timeout_ms, &e) &&
        IntegerFlag<int>("admit-ahead-ms", ahead_text, 0, kMaxAdmitAheadMs,
                         " paper ms (0 = never admitted ahead)", &run.admit_ahead_ms, &e) &&
        IntegerFlag<int>("gate-breaker-ms", breaker_text, 0, kMaxGateBreakerMs,
                         " ms (0 = no circuit breaker)", &run.gate_breaker_cool_off_ms, &e) &&
        IntegerFlag<int>("valkey-pid", pid_text, 0, kMaxValkeyPid, " (0 = none)", &run.valkey_pid,
                         &e) &&
        IntegerFlag<int>("processes", processes_text, 1, 256, "", &plan.processes, &e);
    if (!ok) return UsageError(e);
    // --start-at: given or not (not given: 0, which --shard refuses below).
    if (vm.count("start-at") && !IntegerFlag<int64_t>("start-at", start_text, 1, INT64_MAX, "",
                                                      &run.start_at_unix_ms, &e)) {
      return UsageError(
          "--start-at must be a positive unix ms (an integer, e.g. $(( $(date +%s%3N) "
          "+ 5000 ))), got '" +
          start_text + "'");
    }
  }
  if (sdk_bound == "exclusive") {
    run.sdk_retry_after_bound = SdkRetryAfterBound::kExclusive60s;
  } else if (sdk_bound != "inclusive") {
    return UsageError("--sdk-retry-after-bound must be inclusive or exclusive");
  }
  // Floating-point flags: Boost's conversion (the forms it always took), a
  // message with the range for anything it cannot read.
  try {
    run.speedup = boost::lexical_cast<double>(speedup_text);
  } catch (const boost::bad_lexical_cast&) {
    return UsageError("--speedup must be a number in (0, 1000], got '" + speedup_text + "'");
  }
  double tn_rps = -1;
  try {
    tn_rps = boost::lexical_cast<double>(tn_rps_text);
  } catch (const boost::bad_lexical_cast&) {
  }
  if (!(tn_rps >= 0) || !std::isfinite(tn_rps)) {
    return UsageError(
        "--tn-rps-limit must be a number >= 0 (paper req/s; 0: the workload's request cap), "
        "got '" +
        tn_rps_text + "'");
  }
  run.tn_rps_limit = tn_rps;
  auto limiter = ParseLitellmLimiter(litellm_limiter);
  if (!limiter.ok()) return UsageError("--litellm-limiter: " + limiter.status().message());
  auto tokens = ParseLitellmTokenCount(litellm_tokens);
  if (!tokens.ok()) return UsageError("--litellm-tpm: " + tokens.status().message());
  run.litellm.limiter = *limiter;
  run.litellm.tokens = *tokens;
  if (litellm_stream != "counted" && litellm_stream != "uncounted")
    return UsageError("--litellm-stream-usage must be counted or uncounted, got '" +
                      litellm_stream + "'");
  run.litellm.count_streamed = litellm_stream == "counted";
  auto configs = ParseConfigurationList(config_list);
  if (!configs.ok()) return UsageError(configs.status().message());
  plan.configurations = *configs;
  if (!shard_text.empty()) {
    auto s = ParseShard(shard_text);
    if (!s.ok()) return UsageError(s.status().message());
    plan.shard = *s;
    if (plan.processes != 1) return UsageError("--shard and --processes exclude each other");
    if (files.workloads.size() != 1 || configs->size() != 1 || plan.repeats != 1) {
      return UsageError("--shard runs one run: one --workload, one --config, --repeats 1");
    }
    if (run.start_at_unix_ms <= 0) return UsageError("--shard needs --start-at UNIX_MS");
    if (!IsBaseline(configs->front()) && run.gate_target.empty()) {
      return UsageError("--shard with " + configs->front() + " needs --gate-target NAME");
    }
    if (!run.gate_target.empty() && !bp::ValidTenantName(run.gate_target)) {
      return UsageError("--gate-target must match [A-Za-z0-9_.-]{1,128}");
    }
    if (bp::Status at = CheckStartAt(run.start_at_unix_ms, now_unix_ms); !at.ok()) {
      return UsageError(at.message());
    }
  } else if (vm.count("start-at") || !run.gate_target.empty()) {
    return UsageError("--start-at and --gate-target go with --shard");
  }
  if (bp::Status s = ValidateRunOptions(run); !s.ok()) return UsageError(s.message());
  run.progress = !quiet;
  plan.figures = !no_figures;
  cli_internal::LoadFiles(files, &parse);
  return parse;
}

}  // namespace bp::loadgen
