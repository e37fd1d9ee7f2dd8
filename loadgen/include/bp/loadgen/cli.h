// loadgen's command line: the flags read into a checked plan, then the plan
// run. apps/loadgen.cpp only sets up logging and calls RunLoadgen, so every
// flag check here is unit-tested (tests/loadgen/cli/cli_flags_test.cpp) and the
// exit codes are checked on the binary (tests/cli).
#pragma once

#include <cstdint>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include "bp/loadgen/records_io.h"
#include "bp/loadgen/runner.h"
#include "bp/loadgen/workload.h"

namespace bp::loadgen {

// Everything a run of `loadgen` (not `loadgen merge`) needs, every flag
// checked and every workload file loaded and validated.
struct CliPlan {
  std::vector<Workload> workloads;        // loaded, names unique
  std::vector<std::string> configurations;  // naive, tn, litellm, bp, ...
  RunOptions run;                          // flags that shape each run
  int repeats = 1;                         // [1, 1000]
  int processes = 1;                       // [1, 256]
  std::optional<ShardInfo> shard;          // --shard I/N: run only that part
  std::string out_dir = "results";         // created and writable
  bool figures = true;                     // false with --no-figures
};

// What ParseLoadgenArgs found. kUsage is a bad flag or flag combination
// (printed with "see loadgen --help"); kBadFile a workload or gate-config
// file that could not be read or is invalid (printed as is). Both exit 2,
// before anything is sent anywhere.
struct CliParse {
  enum class Kind { kRun, kHelp, kUsage, kBadFile } kind = Kind::kRun;
  std::string text;  // kHelp: the help; kUsage, kBadFile: the one-line error
  CliPlan plan;      // kRun only
};

// Reads loadgen's flags (argv without the program name), loads the
// workloads they name and creates the results folder. `now_unix_ms` is the
// wall clock --start-at is checked against. Never throws.
CliParse ParseLoadgenArgs(const std::vector<std::string>& args, int64_t now_unix_ms);

// `loadgen ARGS...`: `merge ...` or a parse then the experiment. Returns the
// process exit code (the list in --help: 0, 1, 2; 130/143 come from the
// signal handler that restores mockapi's configuration). Tables go to
// `out`, errors to `err`.
int RunLoadgen(const std::vector<std::string>& args, std::ostream& out, std::ostream& err);

}  // namespace bp::loadgen
