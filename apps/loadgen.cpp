// loadgen: runs workloads under the configurations against a running mockapi
// and Valkey, and writes per-run and per-workload reports. Logging set-up
// only; flags and runs are in bp::loadgen (bp/loadgen/cli.h, docs/loadgen.md).
#include <spdlog/sinks/stdout_color_sinks.h>
#include <spdlog/spdlog.h>

#include <iostream>
#include <memory>
#include <string>
#include <vector>

#include "bp/loadgen/cli.h"

int main(int argc, char** argv) {
  // Log lines (warnings, errors, the wait for a shared start) go to stderr,
  // as the progress line does; stdout keeps the tables, so `loadgen -q >
  // table.txt` keeps the warnings on the terminal.
  spdlog::set_default_logger(std::make_shared<spdlog::logger>(
      "", std::make_shared<spdlog::sinks::stderr_color_sink_mt>()));
  return bp::loadgen::RunLoadgen(std::vector<std::string>(argv + 1, argv + argc), std::cout,
                                 std::cerr);
}
