// mockapi's command line: `mockapi --config FILE [overrides]`, then serve
// until SIGINT/SIGTERM. Flags override the file's fields (docs/mockapi-config.md);
// `mockapi --help` lists them.
#pragma once

#include <string>

#include "bp/mockapi/config.h"
#include "bp/status.h"

namespace bp::mockapi {

struct CommandLine {
  MockConfig config;
  bool help = false;  // --help given: print help_text and exit 0
  std::string help_text;
};

// InvalidArgument naming the flag or field on a bad value; NotFound for an
// unreadable --config file. Never throws.
Result<CommandLine> ParseCommandLine(int argc, const char* const* argv);

// The whole program: parse, serve, stop on a signal. Returns the exit code
// (0 after a clean stop, 2 on a usage error, 1 if the port cannot be bound).
int MockApiMain(int argc, const char* const* argv);

}  // namespace bp::mockapi
