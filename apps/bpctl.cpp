// bpctl: inspect and hot-update the gate's state in Valkey. Flags only; the
// work is in bp::bpctl (bpctl/include/bp/bpctl/bpctl.h, docs/bpctl.md).
#include "bp/bpctl/bpctl.h"

#include <spdlog/spdlog.h>
#include <unistd.h>

#include <atomic>
#include <csignal>
#include <iostream>
#include <string>
#include <vector>

namespace {

std::atomic<bool> g_stop{false};

extern "C" void OnSignal(int) { g_stop = true; }

}  // namespace

int main(int argc, char** argv) {
  spdlog::set_level(spdlog::level::err);  // bpctl reports errors itself
  std::signal(SIGINT, OnSignal);
  std::signal(SIGTERM, OnSignal);
  bp::bpctl::RunContext context;
  context.stop = &g_stop;
  context.clear_screen = isatty(STDOUT_FILENO) == 1;
  return bp::bpctl::RunBpctl(std::vector<std::string>(argv + 1, argv + argc), std::cout, std::cerr,
                             context);
}
