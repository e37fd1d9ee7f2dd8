// bpctl status, watch and export: read-only views of a target.
#include <chrono>
#include <thread>

#include "bp/bpctl/status_view.h"
#include "bp/bpctl/values.h"
#include "bp/gate_config_json.h"
#include "cli_internal.h"

namespace bp::bpctl {
namespace {

// The status model of the target from one state.lua call, or the failure.
Result<nlohmann::ordered_json> ReadStatus(GateAdmin& gate, const std::string& target) {
  auto state = gate.State();
  if (!state.ok()) return state.status();
  return StatusJson(target, *state);
}

int StatusCmd(const Invocation& in) {
  auto gate = in.env.Connect();
  if (!gate) return kExitServer;
  auto s = ReadStatus(*gate, in.env.target);
  if (!s.ok()) return in.env.Fail(s.status());
  in.env.out << (in.Has("json") ? s->dump(2) + "\n" : StatusText(*s)) << std::flush;
  return kExitOk;
}

bool Stopped(const RunContext& c) { return c.stop && c.stop->load(); }

// Sleeps `seconds`, waking early once the context says stop.
void Sleep(double seconds, const RunContext& c) {
  const auto until = std::chrono::steady_clock::now() +
                     std::chrono::microseconds(static_cast<int64_t>(seconds * 1e6));
  while (!Stopped(c) && std::chrono::steady_clock::now() < until) {
    std::this_thread::sleep_for(std::min<std::chrono::steady_clock::duration>(
        std::chrono::milliseconds(50), until - std::chrono::steady_clock::now()));
  }
}

int WatchCmd(const Invocation& in) {
  auto interval = ParseNumberIn(in.Has("interval") ? in.Flag("interval") : "1", "--interval",
                                kWatchIntervalRange);
  if (!interval.ok()) return in.env.Fail(interval.status());
  auto count = ParseInteger(in.Has("count") ? in.Flag("count") : "0", "--count", 0, 1'000'000'000);
  if (!count.ok()) return in.env.Fail(count.status());
  auto gate = in.env.Connect();
  if (!gate) return kExitServer;
  nlohmann::ordered_json previous;
  int rc = kExitOk;
  for (int64_t frame = 0; (*count == 0 || frame < *count) && !Stopped(in.env.context); ++frame) {
    if (frame > 0) Sleep(*interval, in.env.context);
    if (Stopped(in.env.context)) break;
    auto s = ReadStatus(*gate, in.env.target);
    if (!s.ok()) {  // keep watching: the server may come back
      rc = in.env.Fail(s.status());
      continue;
    }
    rc = kExitOk;
    if (!previous.is_null()) AddRates(*s, previous);
    previous = *s;
    if (in.Has("json")) {
      in.env.out << s->dump() << "\n";  // one object per line
    } else {
      if (in.env.context.clear_screen) {
        in.env.out << "\033[H\033[2J";
      } else if (frame > 0) {
        in.env.out << "\n----\n";
      }
      in.env.out << StatusText(*s);
    }
    in.env.out << std::flush;
  }
  return rc;
}

int ExportCmd(const Invocation& in) {
  auto gate = in.env.Connect();
  if (!gate) return kExitServer;
  auto config = gate->Config();
  if (!config.ok()) return in.env.Fail(config.status());
  if (!config->configured) {
    in.env.err << "bpctl: warning: target " << in.env.target
               << " has no caps; the export cannot be imported as is\n";
  }
  in.env.out << GateConfigToJson(*config).dump(2) << "\n" << std::flush;
  return kExitOk;
}

void StatusFlags(po::options_description& d) {
  d.add_options()("json", "print the status as JSON (fields in docs/bpctl.md)");
}

void WatchFlags(po::options_description& d) {
  const std::string interval =
      "seconds between refreshes, in " + TypedRange(kWatchIntervalRange) + " (default 1)";
  d.add_options()("interval", po::value<std::string>()->value_name("S"), interval.c_str())(
      "count", po::value<std::string>()->value_name("N"),
      "stop after N frames (default 0: until Ctrl-C)")(
      "json", "one status JSON object per line, with rates since the previous frame");
}

}  // namespace

std::vector<Command> InspectCommands() {
  return {
      {"status",
       "[--json]",
       "caps, priority and tenant weights, L1 and L2 levels, every active queue",
       "Reads the target's configuration and state (one snapshot; nothing changes).\n"
       "L1 levels are refilled to the server's time; each queue shows its weight\n"
       "w_t * omega_k, virtual tag and lag behind V (a queue far ahead is deferred until\n"
       "the others catch up), whether it is backlogged, its fair share and fair rates\n"
       "among the backlogged queues (the gate has no per-queue bucket: this is the rate\n"
       "that refills its turn), and its admit/defer/lent counters.\n\n"
       "Examples:\n"
       "  bpctl status\n"
       "  bpctl --target prod status --json | jq '.queues[] | select(.backlogged)'\n",
       {},
       StatusFlags,
       StatusCmd},
      {"watch",
       "[--interval S] [--count N] [--json]",
       "status, refreshed every interval until Ctrl-C",
       "Shows `status` every --interval seconds, adding rates since the previous frame\n"
       "(admits/s per queue, admitted req/s and tok/s per class). A failed read is\n"
       "reported and retried at the next frame.\n\n"
       "Examples:\n"
       "  bpctl watch\n"
       "  bpctl watch --interval 0.5 --count 20 --json > frames.jsonl\n",
       {},
       WatchFlags,
       WatchCmd},
      {"export",
       "",
       "the configuration as JSON on stdout (for import)",
       "Prints caps (per second), priority weights, tenant weights and tuning as JSON.\n"
       "`bpctl import` of the output restores the same configuration.\n\n"
       "Examples:\n"
       "  bpctl export > gate.json\n"
       "  bpctl --target staging export | bpctl --target prod import /dev/stdin\n",
       {},
       nullptr,
       ExportCmd},
  };
}

}  // namespace bp::bpctl
