// bpctl - inspect and hot-update a Backpressure gate target in Valkey
// (SPEC section 2, docs/bpctl.md). The whole tool as a library call, so
// tests drive it without a process: apps/bpctl.cpp only forwards argv.
//
//   bpctl [--valkey URL] [--target T] COMMAND [ARGS...] [--help]
//
// Commands: status, watch, set cap, set priority-weights, set weight,
// unset weight, reset, export, import, admit (`bpctl --help` lists them, and
// `bpctl COMMAND --help` shows each with examples). The URL defaults to
// $BP_VALKEY_URL, else redis://127.0.0.1:6379; the target to "default".
//
// Every value is validated before anything is sent, so invalid input changes
// nothing in Valkey. Thread-safety: RunBpctl keeps no global state; calls on
// different streams may run concurrently.
#pragma once

#include <atomic>
#include <istream>
#include <ostream>
#include <string>
#include <vector>

namespace bp::bpctl {

// Process exit codes (documented in `bpctl --help` and docs/bpctl.md).
enum ExitCode : int {
  kExitOk = 0,
  kExitInternal = 1,  // an unexpected failure (a bug)
  kExitUsage = 2,     // unknown command or flag, missing or extra argument, a flag
                      // whose value is missing, a word outside a fixed list (--mode)
  kExitBadValue = 3,  // a value fails validation (number, name, URL, file content)
  kExitServer = 4,    // Valkey unreachable, timed out, or answered with an error
  kExitFile = 5,      // a file cannot be read
};

struct RunContext {
  // watch stops at its next tick once this is true (SIGINT in apps/bpctl.cpp).
  const std::atomic<bool>* stop = nullptr;
  // watch clears the screen before each frame (stdout is a terminal);
  // otherwise frames are separated by a line.
  bool clear_screen = false;
  // `import -` reads the configuration from this stream; nullptr: std::cin.
  std::istream* in = nullptr;
};

// Runs one bpctl command line. `args` excludes the program name. Normal
// output goes to `out`, messages and errors to `err`. Returns an ExitCode.
int RunBpctl(const std::vector<std::string>& args, std::ostream& out, std::ostream& err,
             const RunContext& context = {});

}  // namespace bp::bpctl
