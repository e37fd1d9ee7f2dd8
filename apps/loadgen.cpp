// loadgen: runs workloads under the configurations against a running mockapi
// and Valkey, and writes per-run and per-workload reports. Flags, their
// checks and the loading of the workload files only; the work is in
// bp::loadgen (experiment.h: the workload x configuration x repeat loop).
#include <spdlog/sinks/stdout_color_sinks.h>
#include <spdlog/spdlog.h>
#include <unistd.h>

#include <algorithm>
#include <boost/lexical_cast.hpp>
#include <boost/program_options.hpp>
#include <charconv>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <iostream>
#include <sstream>
#include <string>
#include <vector>

#include "bp/gate_config_json.h"
#include "bp/loadgen/configurations.h"
#include "bp/loadgen/experiment.h"
#include "bp/loadgen/merge_command.h"
#include "bp/loadgen/operator_aids.h"
#include "bp/loadgen/runner.h"
#include "bp/loadgen/shard.h"
#include "bp/loadgen/workload.h"

namespace po = boost::program_options;
namespace fs = std::filesystem;
using namespace bp::loadgen;

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

int64_t UnixMsNow() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

// A usage error: its one line and where the flags are (--help prints them).
int Usage(const std::string& error) {
  std::cerr << "loadgen: " << error << "\nsee loadgen --help\n";
  return 2;
}

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

}  // namespace

int main(int argc, char** argv) {
  // Log lines (warnings, errors, the wait for a shared start) go to stderr,
  // as the progress line does; stdout keeps the tables. spdlog's default
  // logger writes to stdout, so `loadgen -q > table.txt` lost the warnings.
  spdlog::set_default_logger(std::make_shared<spdlog::logger>(
      "", std::make_shared<spdlog::sinks::stderr_color_sink_mt>()));
  if (argc >= 2 && std::string(argv[1]) == "merge") {
    return MergeCommand(std::vector<std::string>(argv + 2, argv + argc), std::cout, std::cerr);
  }
  std::vector<std::string> workloads;
  std::string config_list = "naive,tn,litellm,bp";
  RunOptions run;
  int repeats = 1;
  // Integer flags are read as text and checked here (IntegerFlag).
  std::string repeats_text = "1", seed_text = "1", threads_text = "4", breaker_text = "1000",
              pid_text = "0", processes_text = "1", start_text, speedup_text = "1",
              tn_rps_text = "0";
  std::string out_dir = "results";
  bool no_figures = false;
  bool quiet = false;
  std::string sdk_bound = "inclusive";
  std::string litellm_limiter = "v3";
  std::string litellm_tokens = "output";
  int processes = 1;
  std::string shard_text;
  std::string gate_config_file;

  po::options_description desc("loadgen: a multi-tenant workflow-engine load generator\nOptions");
  desc.add_options()("help,h", "show this help")("workload,w", po::value(&workloads)->composing(),
                                                 "workload JSON file or shipped name "
                                                 "(cross-priority, join-leave, ...; repeatable)")(
      "config,c", po::value(&config_list)->default_value(config_list),
      "comma list of naive,tn,litellm,bp,bp-no-drf,bp-no-priority")(
      "repeats,r", po::value(&repeats_text)->default_value(repeats_text),
      "repeats per configuration, in [1, 1000]")(
      "speedup,s", po::value(&speedup_text)->default_value(speedup_text),
      "time compression in (0, 1000]: rates x F, durations / F; results stay in paper units")(
      "upstream,u", po::value(&run.upstream_url)->default_value(run.upstream_url), "mockapi URL")(
      "valkey,v", po::value(&run.valkey_url)->default_value(run.valkey_url),
      "Valkey/Redis URL (bp)")("out,o", po::value(&out_dir)->default_value(out_dir),
                               "results directory")("seed",
                                                    po::value(&seed_text)->default_value(seed_text),
                                                    "jitter seed (the run uses seed + repeat)")(
      "gate-threads", po::value(&threads_text)->default_value(threads_text),
      "bp: threads/connections for the blocking gate calls, in [1, 256]")(
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
      "tn-rps-limit", po::value(&tn_rps_text)->default_value(tn_rps_text),
      "tn: Temporal queue-rps-limit in paper req/s, >= 0 (0: the workload's request cap)")(
      "quiet,q", po::bool_switch(&quiet),
      "no progress line, gate target line or start wait line (warnings, errors and scenario "
      "event lines stay, on stderr)")(
      "processes", po::value(&processes_text)->default_value(processes_text),
      "run each run as N cooperating processes, N in [1, 256] (tenant t in process t mod N, slots "
      "split, one "
      "gate target and upstream, set up once, one start time); records merged into one report")(
      "shard", po::value(&shard_text),
      "I/N: run only part I of N of one run and write its records to "
      "OUT/<workload>/<config>/r0/shard-I.records.json for `loadgen merge`; part 0 sets up the "
      "upstream and the gate; needs --start-at (and --gate-target for bp)")(
      "start-at", po::value(&start_text),
      "--shard: the shared start, wall clock in unix ms within 1 h of now (leave part 0 a few "
      "seconds for setup; a start ahead prints how long it waits)")(
      "gate-target", po::value(&run.gate_target),
      "--shard: the gate target the parts share (bp configurations)")(
      "gate-config", po::value(&gate_config_file),
      "bp: the gate target's declared configuration (the JSON of `bpctl export`, caps in "
      "real units): written at the start and re-seeded by the gate clients if the store loses "
      "its state; default: derived from the workload (docs/store-restart.md)");

  po::variables_map vm;
  try {
    // No positional arguments: a stray word is an error, not ignored.
    po::store(po::command_line_parser(argc, argv)
                  .options(desc)
                  .positional(po::positional_options_description())
                  .run(),
              vm);
    po::notify(vm);
  } catch (const po::error& e) {
    return Usage(e.what());
  }
  if (vm.count("help")) {
    std::cout << desc << "\n" << kExamples;
    return 0;
  }
  if (workloads.empty()) return Usage("--workload FILE is required");
  {
    std::string e;
    const bool ok =
        IntegerFlag<int>("repeats", repeats_text, 1, 1000, "", &repeats, &e) &&
        IntegerFlag<uint64_t>("seed", seed_text, 0, UINT64_MAX, "", &run.seed, &e) &&
        IntegerFlag<int>("gate-threads", threads_text, 1, 256, "", &run.gate_threads, &e) &&
        IntegerFlag<int>("gate-breaker-ms", breaker_text, 0, kMaxGateBreakerMs,
                         " ms (0 = no circuit breaker)", &run.gate_breaker_cool_off_ms, &e) &&
        IntegerFlag<int>("valkey-pid", pid_text, 0, kMaxValkeyPid, " (0 = none)", &run.valkey_pid,
                         &e) &&
        IntegerFlag<int>("processes", processes_text, 1, 256, "", &processes, &e);
    if (!ok) return Usage(e);
    // --start-at: given or not (not given: 0, which --shard refuses below).
    if (vm.count("start-at") && !IntegerFlag<int64_t>("start-at", start_text, 1, INT64_MAX, "",
                                                      &run.start_at_unix_ms, &e)) {
      return Usage(
          "--start-at must be a positive unix ms (an integer, e.g. $(( $(date +%s%3N) "
          "+ 5000 ))), got '" +
          start_text + "'");
    }
  }
  if (sdk_bound == "exclusive") {
    run.sdk_retry_after_bound = SdkRetryAfterBound::kExclusive60s;
  } else if (sdk_bound != "inclusive") {
    return Usage("--sdk-retry-after-bound must be inclusive or exclusive");
  }
  // Floating-point flags: Boost's conversion (the forms it always took), a
  // message with the range for anything it cannot read.
  try {
    run.speedup = boost::lexical_cast<double>(speedup_text);
  } catch (const boost::bad_lexical_cast&) {
    return Usage("--speedup must be a number in (0, 1000], got '" + speedup_text + "'");
  }
  double tn_rps = -1;
  try {
    tn_rps = boost::lexical_cast<double>(tn_rps_text);
  } catch (const boost::bad_lexical_cast&) {
  }
  if (!(tn_rps >= 0) || !std::isfinite(tn_rps)) {
    return Usage(
        "--tn-rps-limit must be a number >= 0 (paper req/s; 0: the workload's request cap), "
        "got '" +
        tn_rps_text + "'");
  }
  run.tn_rps_limit = tn_rps;
  auto limiter = ParseLitellmLimiter(litellm_limiter);
  if (!limiter.ok()) return Usage("--litellm-limiter: " + limiter.status().message());
  auto tokens = ParseLitellmTokenCount(litellm_tokens);
  if (!tokens.ok()) return Usage("--litellm-tpm: " + tokens.status().message());
  run.litellm.limiter = *limiter;
  run.litellm.tokens = *tokens;
  auto configs = ParseConfigurationList(config_list);
  if (!configs.ok()) return Usage(configs.status().message());
  ShardInfo shard;
  if (!shard_text.empty()) {
    auto s = ParseShard(shard_text);
    if (!s.ok()) return Usage(s.status().message());
    shard = *s;
    if (processes != 1) return Usage("--shard and --processes exclude each other");
    if (workloads.size() != 1 || configs->size() != 1 || repeats != 1) {
      return Usage("--shard runs one run: one --workload, one --config, --repeats 1");
    }
    if (run.start_at_unix_ms <= 0) return Usage("--shard needs --start-at UNIX_MS");
    if (!IsBaseline(configs->front()) && run.gate_target.empty()) {
      return Usage("--shard with " + configs->front() + " needs --gate-target NAME");
    }
    if (!run.gate_target.empty() && !bp::ValidTenantName(run.gate_target)) {
      return Usage("--gate-target must match [A-Za-z0-9_.-]{1,128}");
    }
    if (bp::Status at = CheckStartAt(run.start_at_unix_ms, UnixMsNow()); !at.ok()) {
      return Usage(at.message());
    }
  } else if (vm.count("start-at") || !run.gate_target.empty()) {
    return Usage("--start-at and --gate-target go with --shard");
  }
  if (bp::Status s = ValidateRunOptions(run); !s.ok()) return Usage(s.message());
  if (!gate_config_file.empty()) {
    auto declared = bp::ReadGateConfigFile(gate_config_file);
    if (!declared.ok()) {
      std::cerr << "loadgen: --gate-config " << declared.status().message() << "\n";
      return 2;
    }
    run.gate_config = std::make_shared<const bp::GateConfig>(std::move(*declared));
  }

  std::vector<Workload> loaded;
  const std::vector<std::string> config_dirs = ConfigSearchDirs();
  for (const auto& arg : workloads) {
    auto resolved = ResolveWorkloadArg(arg, config_dirs);
    if (!resolved.ok()) return Usage(resolved.status().message());
    const std::string& path = *resolved;
    auto w = LoadWorkload(path);
    if (!w.ok()) {
      std::cerr << "loadgen: " << w.status().message() << "\n";
      return 2;
    }
    for (const Workload& other : loaded) {
      // Outputs go to OUT/<name>/...: a second workload of the same name
      // would overwrite the first one's runs (and repeat its comparison rows).
      if (other.name == w->name) {
        std::cerr << "loadgen: " << path << ": workload name \"" << w->name
                  << "\" twice (each --workload needs its own name)\n";
        return 2;
      }
    }
    if (bp::Status s = ValidateSpeedupFor(*w, run.speedup); !s.ok()) return Usage(s.message());
    if ((processes > 1 || !shard_text.empty()) && !w->events.empty()) {
      return Usage(path +
                   ": a scenario (events) cannot run over processes (--processes, "
                   "--shard)");
    }
    // Every workload must split over the processes before any run starts
    // (otherwise a later workload with fewer tenants than processes would stop
    // the experiment after the earlier runs, with no comparison written).
    const int parts = shard_text.empty() ? processes : shard.count;
    if (parts > 1) {
      ShardInfo check;
      check.count = parts;
      if (auto split = ShardWorkload(*w, &check); !split.ok()) {
        return Usage(split.status().message());
      }
    }
    loaded.push_back(std::move(*w));
  }
  // The gate caps a bp run writes, at the run's speedup, within bpctl's
  // ranges (bp/gate.h); the file's own units were checked when it was read.
  if (std::any_of(configs->begin(), configs->end(),
                  [](const std::string& c) { return c.rfind("bp", 0) == 0; })) {
    for (const Workload& w : loaded) {
      if (bp::Status s = CheckGateRanges(w, run.speedup); !s.ok()) return Usage(s.message());
    }
  }

  // The results folder is checked before any run (else a run of minutes
  // could end in "cannot create directory" with nothing written).
  if (out_dir.empty()) return Usage("--out must name a directory");
  {
    std::error_code ec;
    fs::create_directories(out_dir, ec);
    if (ec || !fs::is_directory(out_dir) || ::access(out_dir.c_str(), W_OK) != 0) {
      return Usage("--out " + out_dir + ": cannot create or write the results directory" +
                   (ec ? " (" + ec.message() + ")" : ""));
    }
  }

  // An earlier experiment's comparison is replaced, not extended: say which
  // workloads drop out of it before the runs (docs/metrics.md, "Outputs").
  if (shard_text.empty()) {
    const std::vector<std::string> dropped = ComparedWorkloadsDropped(out_dir, loaded);
    if (!dropped.empty()) {
      std::string names;
      for (const std::string& n : dropped) names += (names.empty() ? "" : ", ") + n;
      std::cerr << "loadgen: " << (fs::path(out_dir) / "comparison.md").string() << " covers "
                << names << "; this run replaces it (their runs stay in their folders)\n";
    }
  }

  run.progress = !quiet;
  if (!shard_text.empty()) {
    run.configuration = configs->front();
    if (bp::Status s = RunShardToFile(loaded.front(), run, shard, out_dir, std::cout); !s.ok()) {
      std::cerr << "loadgen: " << s.message() << "\n";
      return 1;
    }
    return 0;
  }
  // mockapi's configuration as found, put back when the runs end, however
  // they end (operator_aids.h). Not reachable: the first run says so.
  auto upstream = UpstreamConfigSnapshot::Take(run.upstream_url);
  if (upstream.ok()) RestoreUpstreamOnSignal(&*upstream);
  ExperimentOptions experiment;
  experiment.configurations = *configs;
  experiment.repeats = repeats;
  experiment.processes = processes;
  experiment.out_dir = out_dir;
  experiment.report.figures = !no_figures;
  const bp::Status s = RunExperiment(loaded, run, experiment, std::cout);
  if (!s.ok()) std::cerr << "loadgen: " << s.message() << "\n";
  if (upstream.ok()) {
    const bp::Status r = upstream->Restore();
    std::cerr << "loadgen: "
              << (r.ok() ? "restored mockapi's configuration at " + upstream->url()
                         : "could not restore mockapi's configuration: " + r.message())
              << "\n";
  }
  return s.ok() ? 0 : 1;
}
