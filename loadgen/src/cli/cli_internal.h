// Between the two halves of loadgen's command line (cli.h): cli_flags.cpp
// reads the flags, cli_run.cpp loads the files they name and runs.
#pragma once

#include <string>
#include <vector>

#include "bp/loadgen/cli.h"

namespace bp::loadgen::cli_internal {

// What the flags name but cli_flags.cpp does not open.
struct FileArgs {
  std::vector<std::string> workloads;  // --workload, as given
  std::string gate_config;             // --gate-config, "" if not given
};

// Loads the gate config and the workloads into `parse->plan`, checks them
// against the flags already read (speedup, processes or shard, gate ranges)
// and creates the results folder. On a problem sets parse->kind (kUsage or
// kBadFile) and parse->text.
void LoadFiles(const FileArgs& files, CliParse* parse);

}  // namespace bp::loadgen::cli_internal
