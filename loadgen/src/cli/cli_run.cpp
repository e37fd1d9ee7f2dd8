// loadgen's command line, second half (cli.h): the files the flags name are
// loaded and checked against the flags, the results folder is made, then
// the runs go (mockapi's configuration restored however they end).
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <memory>
#include <string>
#include <system_error>
#include <vector>

#include "bp/gate_config_json.h"
#include "bp/loadgen/cli.h"
#include "bp/loadgen/experiment.h"
#include "bp/loadgen/merge_command.h"
#include "bp/loadgen/operator_aids.h"
#include "bp/loadgen/shard.h"
#include "cli_internal.h"

namespace fs = std::filesystem;

namespace bp::loadgen {
namespace cli_internal {
namespace {

void Fail(CliParse* parse, CliParse::Kind kind, const std::string& text) {
  parse->kind = kind;
  parse->text = text;
}

}  // namespace

void LoadFiles(const FileArgs& files, CliParse* parse) {
  CliPlan& plan = parse->plan;
  using Kind = CliParse::Kind;
  if (!files.gate_config.empty()) {
    auto declared = bp::ReadGateConfigFile(files.gate_config);
    if (!declared.ok()) {
      return Fail(parse, Kind::kBadFile, "--gate-config " + declared.status().message());
    }
    plan.run.gate_config = std::make_shared<const bp::GateConfig>(std::move(*declared));
  }
  const std::vector<std::string> config_dirs = ConfigSearchDirs();
  for (const auto& arg : files.workloads) {
    auto resolved = ResolveWorkloadArg(arg, config_dirs);
    if (!resolved.ok()) return Fail(parse, Kind::kUsage, resolved.status().message());
    const std::string& path = *resolved;
    auto w = LoadWorkload(path);
    if (!w.ok()) return Fail(parse, Kind::kBadFile, w.status().message());
    for (const Workload& other : plan.workloads) {
      // Outputs go to OUT/<name>/...: a second workload of the same name
      // would overwrite the first one's runs (and repeat its comparison rows).
      if (other.name == w->name) {
        return Fail(parse, Kind::kBadFile,
                    path + ": workload name \"" + w->name +
                        "\" twice (each --workload needs its own name)");
      }
    }
    if (bp::Status s = ValidateSpeedupFor(*w, plan.run.speedup); !s.ok()) {
      return Fail(parse, Kind::kUsage, s.message());
    }
    if ((plan.processes > 1 || plan.shard) && !w->events.empty()) {
      return Fail(parse, Kind::kUsage,
                  path + ": a scenario (events) cannot run over processes (--processes, --shard)");
    }
    // Every workload must split over the processes before any run starts
    // (otherwise a later workload with fewer tenants than processes would stop
    // the experiment after the earlier runs, with no comparison written).
    const int parts = plan.shard ? plan.shard->count : plan.processes;
    if (parts > 1) {
      ShardInfo check;
      check.count = parts;
      if (auto split = ShardWorkload(*w, &check); !split.ok()) {
        return Fail(parse, Kind::kUsage, split.status().message());
      }
    }
    plan.workloads.push_back(std::move(*w));
  }
  // The gate caps a bp run writes, at the run's speedup, within the gate's
  // ranges (bp/gate_ranges.h): the one check of the caps a workload derives.
  if (std::any_of(plan.configurations.begin(), plan.configurations.end(),
                  [](const std::string& c) { return c.rfind("bp", 0) == 0; })) {
    for (const Workload& w : plan.workloads) {
      if (bp::Status s = CheckGateRanges(w, plan.run.speedup); !s.ok()) {
        return Fail(parse, Kind::kUsage, s.message());
      }
    }
  }
  // The results folder is checked before any run (else a run of minutes
  // could end in "cannot create directory" with nothing written).
  if (plan.out_dir.empty()) return Fail(parse, Kind::kUsage, "--out must name a directory");
  std::error_code ec;
  fs::create_directories(plan.out_dir, ec);
  if (ec || !fs::is_directory(plan.out_dir) || ::access(plan.out_dir.c_str(), W_OK) != 0) {
    return Fail(parse, Kind::kUsage,
                "--out " + plan.out_dir + ": cannot create or write the results directory" +
                    (ec ? " (" + ec.message() + ")" : ""));
  }
}

}  // namespace cli_internal

namespace {

int64_t UnixMsNow() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

int RunPlan(CliPlan& plan, std::ostream& out, std::ostream& err) {
  if (plan.shard) {
    plan.run.configuration = plan.configurations.front();
    const bp::Status s =
        RunShardToFile(plan.workloads.front(), plan.run, *plan.shard, plan.out_dir, out);
    if (!s.ok()) err << "loadgen: " << s.message() << "\n";
    return s.ok() ? 0 : 1;
  }
  // An earlier experiment's comparison is replaced, not extended: say which
  // workloads drop out of it before the runs (docs/metrics.md, "Outputs").
  const std::vector<std::string> dropped = ComparedWorkloadsDropped(plan.out_dir, plan.workloads);
  if (!dropped.empty()) {
    std::string names;
    for (const std::string& n : dropped) names += (names.empty() ? "" : ", ") + n;
    err << "loadgen: " << (fs::path(plan.out_dir) / "comparison.md").string() << " covers " << names
        << "; this run replaces it (their runs stay in their folders)\n";
  }
  // mockapi's configuration as found, put back when the runs end, however
  // they end (operator_aids.h). Not reachable: the first run says so.
  auto upstream = UpstreamConfigSnapshot::Take(plan.run.upstream_url);
  if (upstream.ok()) RestoreUpstreamOnSignal(&*upstream);
  ExperimentOptions experiment;
  experiment.configurations = plan.configurations;
  experiment.repeats = plan.repeats;
  experiment.processes = plan.processes;
  experiment.out_dir = plan.out_dir;
  experiment.report.figures = plan.figures;
  const bp::Status s = RunExperiment(plan.workloads, plan.run, experiment, out);
  if (!s.ok()) err << "loadgen: " << s.message() << "\n";
  if (upstream.ok()) {
    const bp::Status r = upstream->Restore();
    err << "loadgen: "
        << (r.ok() ? "restored mockapi's configuration at " + upstream->url()
                   : "could not restore mockapi's configuration: " + r.message())
        << "\n";
  }
  return s.ok() ? 0 : 1;
}

}  // namespace

int RunLoadgen(const std::vector<std::string>& args, std::ostream& out, std::ostream& err) {
  if (!args.empty() && args.front() == "merge") {
    return MergeCommand(std::vector<std::string>(args.begin() + 1, args.end()), out, err);
  }
  CliParse parse = ParseLoadgenArgs(args, UnixMsNow());
  switch (parse.kind) {
    case CliParse::Kind::kHelp:
      out << parse.text;
      return 0;
    case CliParse::Kind::kUsage:
      err << "loadgen: " << parse.text << "\nsee loadgen --help\n";
      return 2;
    case CliParse::Kind::kBadFile:
      err << "loadgen: " << parse.text << "\n";
      return 2;
    case CliParse::Kind::kRun:
      break;
  }
  return RunPlan(parse.plan, out, err);
}

}  // namespace bp::loadgen
