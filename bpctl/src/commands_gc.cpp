// bpctl gc: deletes the targets of a Valkey database that no worker has used
// for a while, so runs on a shared Valkey (each loadgen run makes a fresh
// target) do not pile up keys. Keys of a target: bp:{T}:state, :bl, :bx,
// :seen, :rsv and tickets bp:{T}:tk:<n> (tickets expire on their own). A target's
// last use is the server time of its last admission (GateState::l1_at_ms,
// read with bp::GateAdmin::State on the node holding it); a target never admitted
// to (configured only) is kept.
#include <algorithm>
#include <cstdio>
#include <string>
#include <vector>

#include "bp/bpctl/values.h"
#include "bp/valkey.h"
#include "bp/valkey_cluster.h"
#include "cli_internal.h"

namespace bp::bpctl {
namespace {

struct Candidate {
  std::string target;
  double idle_s = 0;
};

// The target of a state key "bp:{T}:state", or "" for any other key.
std::string TargetOf(const std::string& key) {
  const std::string head = "bp:{", tail = "}:state";
  if (key.size() <= head.size() + tail.size() || key.rfind(head, 0) != 0 ||
      key.compare(key.size() - tail.size(), tail.size(), tail) != 0) {
    return "";
  }
  std::string t = key.substr(head.size(), key.size() - head.size() - tail.size());
  return ValidTenantName(t) ? t : "";
}

// The plain redis:// URLs of the nodes to scan: the URL itself, or for a
// redis+cluster:// URL every primary of its CLUSTER SLOTS map (with the URL's
// credentials), since SCAN sees the keys of one node only.
Result<std::vector<std::string>> NodesToScan(const std::string& url) {
  auto parsed = ParseValkeyUrl(url);
  if (!parsed.ok()) return parsed.status();
  if (!parsed->cluster) return std::vector<std::string>{url};
  ValkeyConnection seed(ValkeyOptions{url, 1000, 5000});
  if (Status s = seed.Connect(); !s.ok()) return s;
  auto reply = seed.Command({"CLUSTER", "SLOTS"});
  if (!reply.ok()) return reply.status();
  auto ranges = ParseClusterSlots(*reply, parsed->host);
  if (!ranges.ok()) return ranges.status();
  std::string cred;
  if (!parsed->password.empty()) cred = parsed->user + ":" + parsed->password + "@";
  std::vector<std::string> nodes;
  for (const ClusterSlotRange& r : *ranges) {
    const std::string node = "redis://" + cred + r.host + ":" + std::to_string(r.port);
    if (std::find(nodes.begin(), nodes.end(), node) == nodes.end()) nodes.push_back(node);
  }
  return nodes;
}

int GcCmd(const Invocation& in) {
  auto idle = ParseInRange(in.Has("idle-s") ? in.Flag("idle-s") : "86400", "--idle-s", 0, 1e10);
  if (!idle.ok()) return in.env.Fail(idle.status());
  auto nodes = NodesToScan(in.env.url);
  if (!nodes.ok()) {
    return in.env.Fail(kExitServer, "cannot reach Valkey at " + RedactValkeyUrl(in.env.url) + ": " +
                                        nodes.status().ToString());
  }
  std::vector<Candidate> idle_targets;
  size_t kept = 0;
  for (const std::string& node : *nodes) {
    ValkeyConnection conn(ValkeyOptions{node, 1000, 5000});
    if (Status s = conn.Connect(); !s.ok()) {
      return in.env.Fail(kExitServer,
                         "cannot reach Valkey at " + RedactValkeyUrl(node) + ": " + s.ToString());
    }
    std::string cursor = "0";
    do {
      auto page = conn.Command({"SCAN", cursor, "MATCH", "bp:{*}:state", "COUNT", "1000"});
      if (!page.ok() || page->is_error() || page->elements.size() != 2) {
        return in.env.Fail(kExitServer,
                           "SCAN failed: " + (page.ok() ? page->str : page.status().ToString()));
      }
      cursor = page->elements[0].AsString();
      for (const ValkeyReply& k : page->elements[1].elements) {
        const std::string target = TargetOf(k.str);
        if (target.empty()) continue;  // e.g. a dry-run copy bp:{T}:dry:<hex>:state
        // The target's last admission, read through the gate's state.lua
        // (the record layouts belong to lib/gate/lua/prelude.lua), on this node.
        GateOptions o;
        o.url = node;
        o.target = target;
        o.connect_timeout_ms = 1000;
        o.command_timeout_ms = 5000;
        auto st = GateAdmin(o).State();
        if (!st.ok())
          return in.env.Fail(kExitServer, "state of " + target + ": " + st.status().ToString());
        if (!st->has_bucket_state) {
          ++kept;  // never admitted to: a configuration waiting for its workers
          continue;
        }
        const double idle_s = (st->server_time_ms - st->l1_at_ms) / 1e3;
        if (idle_s >= *idle) {
          idle_targets.push_back({target, idle_s});
        } else {
          ++kept;
        }
      }
    } while (cursor != "0");
  }
  const bool dry = in.Has("dry-run");
  for (const Candidate& c : idle_targets) {
    if (!dry) {
      GateOptions o;
      o.url = in.env.url;
      o.target = c.target;
      o.connect_timeout_ms = 1000;
      o.command_timeout_ms = 5000;
      if (Status s = GateAdmin(o).Reset(); !s.ok()) return in.env.Fail(s);
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
       "seconds old, default one day. Targets never admitted to are kept. Each\n"
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
