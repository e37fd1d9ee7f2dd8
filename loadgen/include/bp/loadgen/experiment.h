// The experiment loop: every workload x configuration x repeat run, its
// outputs, each workload's report and the comparison across workloads; and
// one part of a shared run (--shard) written for `loadgen merge`. apps/loadgen
// parses and checks the flags, loads the workloads and calls one of these.
//
// Outputs (report.h): OUT/<workload>/<configuration>/r<repeat>/ per run
// (WriteRunOutputs, plus WriteScenarioOutputs for a workload with events),
// OUT/<workload>/ per workload (WriteWorkloadReport), OUT/comparison.*
// (WriteComparison). Progress for humans goes to `out`: each run's table
// (RunTableMarkdown) as it ends, then the comparison.
//
// Errors: the first failing run stops the experiment, its Status message
// "<workload> <configuration> #<repeat>: <why>" (the runner's code); a failed
// write returns the writer's Status unchanged. Outputs of earlier runs stay.
// Thread-safety: one call at a time (runs fork processes and use the
// configured upstream and gate); no shared state.
#pragma once

#include <ostream>
#include <string>
#include <vector>

#include "bp/loadgen/records_io.h"
#include "bp/loadgen/report.h"
#include "bp/loadgen/runner.h"
#include "bp/loadgen/workload.h"
#include "bp/status.h"

namespace bp::loadgen {

struct ExperimentOptions {
  std::vector<std::string> configurations;  // names ParseConfigurationList accepts, in order
  int repeats = 1;                          // >= 1 runs per configuration
  int processes = 1;  // 1: RunOnce; N > 1: each run as N processes (RunProcesses), their
                      // shard files in the run's folder under shards/
  std::string out_dir = "results";  // an existing, writable directory
  ReportOptions report;
};

// Runs the experiment. `run` is the template of every run: its
// configuration and repeat are set per run (the jitter seed is run.seed +
// repeat, as RunOnce documents).
Status RunExperiment(const std::vector<Workload>& workloads, RunOptions run,
                     const ExperimentOptions& options, std::ostream& out);

// The workloads that OUT/comparison.json (written with comparison.md by an
// earlier experiment into `out_dir`) covers and `workloads` do not: the
// comparison this experiment writes replaces both files and drops them (their
// OUT/<workload>/ folders stay). Empty when the file is absent or unreadable.
std::vector<std::string> ComparedWorkloadsDropped(const std::string& out_dir,
                                                  const std::vector<Workload>& workloads);

// Runs part `shard` of one run of `workload` under run.configuration
// (RunShard; part 0 sets up the upstream and the gate) and writes its records
// to OUT/<workload>/<configuration>/r0/shard-<index>.records.json, naming the
// file on `out`. Errors: "<workload> <configuration> shard <i>/<N>: <why>",
// or the writer's Status.
Status RunShardToFile(const Workload& workload, RunOptions run, const ShardInfo& shard,
                      const std::string& out_dir, std::ostream& out);

}  // namespace bp::loadgen
