// bpctl internals shared by cli.cpp (parsing, dispatch, help) and the
// command files (commands_*.cpp). Not a public header.
#pragma once

#include <boost/program_options.hpp>
#include <memory>
#include <ostream>
#include <string>
#include <vector>

#include "bp/bpctl/bpctl.h"
#include "bp/decimal.h"
#include "bp/gate.h"
#include "bp/gate_admin.h"
#include "bp/status.h"

namespace bp::bpctl {

namespace po = boost::program_options;

// What every command gets: streams, the resolved URL and target.
struct Env {
  std::ostream& out;
  std::ostream& err;
  std::string url;
  std::string target;
  const RunContext& context;
  // Where `url` came from, named in errors about it: "--valkey",
  // "BP_VALKEY_URL" or "default".
  std::string url_source = "--valkey";
  // --target was given before the command (it may not be given again after).
  bool target_given = false;
  // --create: the writing commands may make a target that does not exist yet.
  bool create = false;

  // A gate on url/target, connected and with its scripts loaded (Ping);
  // nullptr after printing the error (then return kExitServer).
  std::unique_ptr<GateAdmin> Connect(GateMode mode = GateMode::kReconcile) const;
  // Prints "bpctl: <message>" and returns `code`.
  int Fail(int code, const std::string& message) const;
  // The same for a Status: InvalidArgument/NotFound -> kExitBadValue,
  // anything else (unreachable, timeout, server error) -> kExitServer.
  int Fail(const Status& status) const;
};

// One parsed command line.
struct Invocation {
  const po::variables_map& vm;
  const std::vector<std::string>& args;  // positional arguments
  const Env& env;

  bool Has(const char* flag) const { return vm.count(flag) > 0; }
  std::string Flag(const char* flag) const {
    return Has(flag) ? vm[flag].as<std::string>() : std::string();
  }
};

struct Command {
  const char* name;                      // "set cap"
  const char* synopsis;                  // "[--rpm N] [--tpm N] [--burst-s S]"
  const char* summary;                   // one line for `bpctl --help`
  std::string details;                   // paragraphs and examples for `--help`
  std::vector<const char*> positionals;  // e.g. {"TENANT", "W"}: exactly these
  void (*flags)(po::options_description&);
  int (*run)(const Invocation&);
};

// update_flags.cpp: the flags of `set cap` and `set adapt`, their help naming
// the ranges and defaults of bp/gate_ranges.h, and a range as the flags take
// it ("[0.001, 1000000000]": plain decimals, which the strict parser reads).
void CapFlags(po::options_description& d);
void AdaptFlags(po::options_description& d);
std::string TypedRange(const NumberRange& range);

// The command tables of commands_inspect.cpp, commands_update.cpp,
// commands_admit.cpp and commands_gc.cpp, in the order `bpctl --help` lists them.
std::vector<Command> InspectCommands();
std::vector<Command> UpdateCommands();
std::vector<Command> AdmitCommands();
std::vector<Command> GcCommands();       // commands_gc.cpp
std::vector<Command> TargetsCommands();  // commands_targets.cpp
std::vector<Command> MetricsCommands();  // commands_metrics.cpp

// One gate target found by ScanTargets: the plain redis:// URL of the node
// holding it (the given URL, or a cluster primary) and its name.
struct TargetOnNode {
  std::string node_url;
  std::string target;
};

// Every target of the database at `url` (keys bp:{T}:state; on every primary
// of a redis+cluster:// URL), sorted by name. Unavailable naming the node
// (password redacted) when a node cannot be reached or SCAN fails.
Result<std::vector<TargetOnNode>> ScanTargets(const std::string& url);

// The GateOptions of a GateAdmin on `target` at `node_url`, with the scan's
// timeouts (1 s to connect, 5 s a command).
GateOptions TargetGateOptions(const std::string& node_url, const std::string& target);

// The state of a found target, read on its node (GateAdmin::State); on
// failure the status with "state of TARGET: " in front of its text.
Result<GateState> StateOfTarget(const TargetOnNode& t);

// For a command that writes configuration: -1 when in.env.target exists or
// --create was given; else prints "COMMAND: target T does not exist ...",
// with the closest existing target names, and returns kExitBadValue (or
// kExitServer when the scan fails).
int RequireExistingTarget(const Invocation& in, const char* command);

inline constexpr const char* kExitCodes =
    "Exit codes: 0 ok; 1 internal error; 2 bad usage (unknown command or flag, missing or\n"
    "extra argument, a flag followed by a flag instead of its value, a word outside a fixed\n"
    "list such as --mode); 3 bad value (validation failed: nothing was changed); 4 Valkey\n"
    "unreachable, timed out or answered with an error; 5 a file cannot be read.\n";

}  // namespace bp::bpctl
