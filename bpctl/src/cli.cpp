// bpctl command line (bpctl.h): global flags before the command, the command
// (one or two words), then its flags and arguments, each parsed with
// Boost.Program_options. Values are kept as text and validated by the command
// (values.h), so a bad number is exit 3 and a bad flag exit 2.
#include <cstdlib>
#include <sstream>

#include "bp/bpctl/values.h"
#include "bp/valkey.h"
#include "cli_internal.h"

namespace bp::bpctl {
namespace {

constexpr const char* kDefaultUrl = "redis://127.0.0.1:6379";
constexpr const char* kTitle =
    "bpctl - inspect and hot-update the Backpressure gate's state in Valkey\n\n";

std::vector<Command> AllCommands() {
  std::vector<Command> all = InspectCommands();
  for (auto part : {TargetsCommands(), MetricsCommands(), UpdateCommands(), AdmitCommands(),
                    GcCommands()})
    all.insert(all.end(), part.begin(), part.end());
  return all;
}

void AddConnectionFlags(po::options_description& d) {
  d.add_options()("valkey", po::value<std::string>()->value_name("URL"),
                  "Valkey/Redis URL: redis://[[user]:password@]host[:port][/db], "
                  "unix:///path[?db=N] or redis+cluster://host:port[,host:port...] "
                  "(default $BP_VALKEY_URL, else redis://127.0.0.1:6379)")(
      "target", po::value<std::string>()->value_name("T"),
      "gate target, keys bp:{T}:... ([A-Za-z0-9_.-]{1,128}; default \"default\")")(
      "create",
      "let set/import make a target that does not exist yet (without it they refuse, exit 3, "
      "naming the closest existing targets)")("help,h", "show this help");
}

void TopHelp(std::ostream& o, const std::string& only_group = "") {
  o << kTitle << "Usage: bpctl [--valkey URL] [--target T] COMMAND [ARGS...]\n"
    << "       bpctl COMMAND --help     (each command's flags and examples)\n\nCommands:\n";
  for (const Command& c : AllCommands()) {
    const std::string name = c.name;
    if (!only_group.empty() && name.rfind(only_group + " ", 0) != 0) continue;
    o << "  " << name << std::string(name.size() < 22 ? 22 - name.size() : 1, ' ') << c.summary
      << "\n";
  }
  po::options_description global("Global options");
  AddConnectionFlags(global);
  o << "\n" << global << "\nEnvironment: BP_VALKEY_URL (the default --valkey).\n\n" << kExitCodes;
}

void CommandHelp(std::ostream& o, const Command& c, const po::options_description& flags) {
  o << "Usage: bpctl [--valkey URL] [--target T] " << c.name << " " << c.synopsis << "\n\n"
    << c.name << ": " << c.summary << ".\n\n"
    << c.details << "\n"
    << flags << "\n"
    << kExitCodes;
}

int Usage(std::ostream& err, const std::string& message, const std::string& command) {
  err << "bpctl: " << message << "\n"
      << "Run 'bpctl " << (command.empty() ? "" : command + " ") << "--help' for usage.\n";
  return kExitUsage;
}

// A flag that takes a value, followed by a word that is itself a flag
// ("--mode --dry-run"): Boost would take "--dry-run" as the value, so the
// mode would be refused as a bad value and --dry-run silently dropped. A
// usage error naming both instead; "" when there is none. A value that
// really starts with "--" is written --flag=VALUE.
std::string FlagTakenAsValue(const std::vector<std::string>& args,
                             const po::options_description& options) {
  for (size_t i = 0; i + 1 < args.size(); ++i) {
    const std::string& a = args[i];
    if (a.rfind("--", 0) != 0 || a.size() == 2 || a.find('=') != std::string::npos) continue;
    const po::option_description* o = options.find_nothrow(a.substr(2), /*approx=*/false);
    if (!o || o->semantic()->max_tokens() == 0 || args[i + 1].rfind("--", 0) != 0) continue;
    return "option '" + a + "' needs a value, got the flag '" + args[i + 1] + "' (write " + a +
           "=VALUE for a value that starts with --)";
  }
  return "";
}

// Index of the command word: global flags (and the values of --valkey and
// --target given as separate words) come first.
size_t CommandIndex(const std::vector<std::string>& args) {
  size_t i = 0;
  for (; i < args.size(); ++i) {
    const std::string& a = args[i];
    if (a.empty() || a[0] != '-') break;
    if ((a == "--valkey" || a == "--target") && i + 1 < args.size()) ++i;
  }
  return i;
}

// Global flags into *url / *target; an exit code, or -1 to go on.
int ParseGlobal(const std::vector<std::string>& args, bool has_command, Env* env, std::ostream& out,
                std::ostream& err) {
  po::options_description global;
  AddConnectionFlags(global);
  if (std::string m = FlagTakenAsValue(args, global); !m.empty()) return Usage(err, m, "");
  po::variables_map vm;
  try {
    po::store(
        po::command_line_parser(args)
            .options(global)
            .style(po::command_line_style::unix_style ^ po::command_line_style::allow_guessing)
            .run(),
        vm);
  } catch (const po::error& e) {
    return Usage(err, e.what(), "");
  }
  if (vm.count("help")) {
    TopHelp(out);
    return kExitOk;
  }
  if (!has_command) return Usage(err, "missing COMMAND", "");
  if (vm.count("valkey")) {
    env->url = vm["valkey"].as<std::string>();
    env->url_source = "--valkey";
  }
  if (vm.count("target")) {
    env->target = vm["target"].as<std::string>();
    env->target_given = true;
  }
  env->create = vm.count("create") > 0;
  return -1;
}

int RunCommand(const Command& cmd, const std::vector<std::string>& args, Env& env) {
  po::options_description flags("Options");
  if (cmd.flags) cmd.flags(flags);
  AddConnectionFlags(flags);
  po::options_description all;
  all.add(flags).add_options()("args", po::value<std::vector<std::string>>(), "");
  po::positional_options_description pos;
  pos.add("args", -1);
  po::variables_map vm;
  // Long flags only: "-1" is an argument (then rejected as a value), not a flag.
  const int style = po::command_line_style::allow_long |
                    po::command_line_style::long_allow_adjacent |
                    po::command_line_style::long_allow_next;
  for (const std::string& a : args) {
    if (a == "-h") {
      CommandHelp(env.out, cmd, flags);
      return kExitOk;
    }
  }
  if (std::string m = FlagTakenAsValue(args, all); !m.empty()) return Usage(env.err, m, cmd.name);
  try {
    po::store(po::command_line_parser(args).options(all).positional(pos).style(style).run(), vm);
  } catch (const po::error& e) {
    return Usage(env.err, e.what(), cmd.name);
  }
  if (vm.count("help")) {
    CommandHelp(env.out, cmd, flags);
    return kExitOk;
  }
  const std::vector<std::string> positional =
      vm.count("args") ? vm["args"].as<std::vector<std::string>>() : std::vector<std::string>{};
  if (positional.size() != cmd.positionals.size()) {
    std::string expected;
    for (const char* p : cmd.positionals) expected += std::string(" ") + p;
    return Usage(env.err,
                 std::string(cmd.name) + ": expected" +
                     (expected.empty() ? " no arguments" : expected) + ", got " +
                     std::to_string(positional.size()) + " argument(s)",
                 cmd.name);
  }
  // Before and after the command, as twice before it: a usage error (the
  // value after the command silently won).
  if ((vm.count("valkey") && env.url_source == "--valkey") ||
      (vm.count("target") && env.target_given)) {
    return Usage(env.err,
                 std::string("option '--") + (vm.count("valkey") ? "valkey" : "target") +
                     "' cannot be specified more than once (before and after the command)",
                 cmd.name);
  }
  if (vm.count("valkey")) {
    env.url = vm["valkey"].as<std::string>();
    env.url_source = "--valkey";
  }
  if (vm.count("target")) env.target = vm["target"].as<std::string>();
  if (vm.count("create")) env.create = true;
  if (auto u = ParseValkeyUrl(env.url); !u.ok()) {
    return env.Fail(kExitBadValue, env.url_source + ": " + u.status().message());
  }
  if (auto t = ParseTarget(env.target); !t.ok()) return env.Fail(t.status());
  return cmd.run(Invocation{vm, positional, env});
}

int Run(const std::vector<std::string>& args, std::ostream& out, std::ostream& err,
        const RunContext& context) {
  const char* env_url = std::getenv("BP_VALKEY_URL");
  const bool from_env = env_url && *env_url;
  Env env{out,       err,     from_env ? env_url : kDefaultUrl,
          "default", context, from_env ? "BP_VALKEY_URL" : "default"};
  const size_t at = CommandIndex(args);
  const std::vector<std::string> global(args.begin(), args.begin() + at);
  if (int rc = ParseGlobal(global, at < args.size(), &env, out, err); rc >= 0) {
    return rc;
  }
  std::string name = args[at];
  size_t rest = at + 1;
  if (name == "set" || name == "unset") {
    const bool help = rest < args.size() && (args[rest] == "--help" || args[rest] == "-h");
    if (help) {
      TopHelp(out, name);
      return kExitOk;
    }
    if (rest == args.size() || args[rest].empty() || args[rest][0] == '-') {
      return Usage(err, "'" + name + "' needs a subcommand", name);
    }
    name += " " + args[rest++];
  }
  for (const Command& c : AllCommands()) {
    if (name == c.name) {
      return RunCommand(c, std::vector<std::string>(args.begin() + rest, args.end()), env);
    }
  }
  return Usage(err, "unknown command '" + name + "'", "");
}

}  // namespace

std::unique_ptr<GateAdmin> Env::Connect(GateMode mode) const {
  GateOptions o;
  o.url = url;
  o.target = target;
  o.mode = mode;
  o.connect_timeout_ms = 1000;
  o.command_timeout_ms = 5000;  // a tool, not the admission path
  auto gate = std::make_unique<GateAdmin>(o);
  if (Status s = gate->Ping(); !s.ok()) {
    const std::string source = url_source == "--valkey" ? ""
                               : url_source == "BP_VALKEY_URL"
                                   ? " (from BP_VALKEY_URL)"
                                   : " (the default; set --valkey or BP_VALKEY_URL)";
    // InvalidArgument: the server answered but refused the URL's SELECT.
    const bool refused = s.code() == StatusCode::kInvalidArgument;
    Fail(kExitServer,
         (refused ? "Valkey at " : "cannot reach Valkey at ") + RedactValkeyUrl(url) + source +
             (refused ? " refused the connection: " + s.message() : ": " + s.ToString()));
    return nullptr;
  }
  return gate;
}

int Env::Fail(int code, const std::string& message) const {
  err << "bpctl: " << message << "\n";
  return code;
}

int Env::Fail(const Status& s) const {
  const bool bad_value =
      s.code() == StatusCode::kInvalidArgument || s.code() == StatusCode::kNotFound;
  return Fail(bad_value ? kExitBadValue : kExitServer, bad_value ? s.message() : s.ToString());
}

int RunBpctl(const std::vector<std::string>& args, std::ostream& out, std::ostream& err,
             const RunContext& context) {
  try {
    return Run(args, out, err, context);
  } catch (const std::exception& e) {
    err << "bpctl: internal error: " << e.what() << "\n";
    return kExitInternal;
  }
}

}  // namespace bp::bpctl
