// bpctl gc: deletes the targets of a Valkey database that no worker has used
// for a while, so runs on a shared Valkey (each loadgen run makes a fresh
// target) do not pile up keys. Keys of a target: bp:{T}:state, :bl, :bx,
// :seen, :rsv and tickets bp:{T}:tk:<n> (tickets expire on their own). A target's
// last use is the server time of its last admission (GateState::l1_at_ms,
// read with bp::GateAdmin::State on the node holding it); a target never admitted
// to (configured only, or reset and not admitted to since) is kept.
#include <algorithm>
#include <cstdio>
#include <optional>
#include <string>
#include <vector>

#include "bp/bpctl/values.h"
#include "cli_internal.h"

namespace bp::bpctl {
namespace {

struct Candidate {
  std::string target;
  double idle_s = 0;
};

int GcCmd(const Invocation& in) {
  auto idle = ParseInRange(in.Has("idle-s") ? in.Flag("idle-s") : "86400", "--idle-s", 0, 1e10);
  if (!idle.ok()) return in.env.Fail(idle.status());
  auto found = ScanTargets(in.env.url);  // every primary of a cluster URL
  if (!found.ok()) return in.env.Fail(kExitServer, found.status().message());
  std::vector<Candidate> idle_targets;
  size_t kept = 0;
  for (const TargetOnNode& t : *found) {
    // The target's last admission, read through the gate's state.lua (the
    // record layouts belong to lib/gate/lua/prelude.lua), on its node.
    auto st = StateOfTarget(t);
    if (!st.ok()) return in.env.Fail(kExitServer, st.status().message());
    const std::optional<double> last_ms = st->last_admission_ms();
    if (!last_ms) {
      ++kept;  // never admitted to (or not since a reset): a configuration waiting for its workers
      continue;
    }
    const double idle_s = (st->server_time_ms - *last_ms) / 1e3;
    if (idle_s >= *idle) {
      idle_targets.push_back({t.target, idle_s});
    } else {
      ++kept;
    }
  }
  const bool dry = in.Has("dry-run");
  for (const Candidate& c : idle_targets) {
    if (!dry) {
      if (Status s = GateAdmin(TargetGateOptions(in.env.url, c.target)).Reset(); !s.ok()) {
        return in.env.Fail(s);
      }
    }
    char idle_text[32];
    std::snprintf(idle_text, sizeof idle_text, "%.0f", c.idle_s);
    in.env.out << (dry ? "would delete" : "deleted") << " target " << c.target << " (idle "
               << idle_text << " s)\n";
  }
  in.env.out << idle_targets.size() << " target(s) idle >= " << FormatNumber(*idle) << " s "
             << (dry ? "to delete" : "deleted") << ", " << kept << " kept\n";
  return kExitOk;
}

void GcFlags(po::options_description& d) {
  d.add_options()("idle-s", po::value<std::string>()->value_name("S"),
                  "delete targets whose last admission is at least S seconds old (default "
                  "86400)")("dry-run", "list what would be deleted, delete nothing");
}

}  // namespace

std::vector<Command> GcCommands() {
  return {
      {"gc",
       "[--idle-s S] [--dry-run]",
       "delete targets idle for S seconds (all targets)",
       "Scans every target of the Valkey database (--target is ignored; a cluster\n"
       "URL: every primary of its slot map) and deletes\n"
       "all keys of each target whose last admission (server time) is at least S\n"
       "seconds old, default one day. Targets never admitted to (or not since a\n"
       "`bpctl reset`) are kept. Each\n"
       "loadgen run makes a fresh target; run gc on a shared Valkey now and then.\n\n"
       "Examples:\n"
       "  bpctl gc --dry-run\n"
       "  bpctl --valkey redis://127.0.0.1:6379 gc --idle-s 3600\n",
       {},
       GcFlags,
       GcCmd},
  };
}

}  // namespace bp::bpctl
