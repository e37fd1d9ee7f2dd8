// bpctl targets, and the one scan of a database's gate targets that it, gc
// and the new-target check of the writing commands share. A target exists
// when its state hash bp:{T}:state does (configuration and bucket state both
// live there; lib/gate/lua/prelude.lua). SCAN sees one node's keys, so a
// redis+cluster:// URL is scanned on every primary of its slot map.
#include <algorithm>
#include <optional>
#include <nlohmann/json.hpp>

#include "bp/bpctl/values.h"
#include "bp/closest_names.h"
#include "bp/decimal.h"
#include "bp/valkey.h"
#include "bp/valkey_cluster.h"
#include "cli_internal.h"

namespace bp::bpctl {
namespace {

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
// credentials).
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

int TargetsCmd(const Invocation& in) {
  auto found = ScanTargets(in.env.url);
  if (!found.ok()) return in.env.Fail(kExitServer, found.status().message());
  nlohmann::ordered_json list = nlohmann::ordered_json::array();
  std::vector<std::vector<std::string>> rows = {
      {"TARGET", "CONFIGURED", "QUEUES", "BACKLOGGED", "LAST ADMISSION"}};
  for (const TargetOnNode& t : *found) {
    auto st = StateOfTarget(t);
    if (!st.ok()) return in.env.Fail(kExitServer, st.status().message());
    const int64_t backlogged = std::count_if(st->queues.begin(), st->queues.end(),
                                             [](const GateQueueState& q) { return q.backlogged; });
    // Idle time by the server's clock; never admitted to (or not since a
    // reset): none.
    const std::optional<double> last_ms = st->last_admission_ms();
    const double idle_s = last_ms ? (st->server_time_ms - *last_ms) / 1e3 : -1;
    nlohmann::ordered_json j = {
        {"target", t.target},
        {"configured", st->configured},
        {"queues", st->queues.size()},
        {"backlogged", backlogged},
        {"idle_s", idle_s >= 0 ? nlohmann::ordered_json(idle_s) : nlohmann::ordered_json(nullptr)}};
    list.push_back(j);
    rows.push_back({t.target, st->configured ? "yes" : "no (no caps)",
                    std::to_string(st->queues.size()), std::to_string(backlogged),
                    idle_s >= 0 ? FormatDuration(idle_s) + " ago" : "never"});
  }
  if (in.Has("json")) {
    in.env.out << list.dump(2) << "\n" << std::flush;
    return kExitOk;
  }
  if (found->empty()) {
    in.env.out << "no gate targets in " << RedactValkeyUrl(in.env.url) << "\n";
    return kExitOk;
  }
  std::vector<size_t> width(rows[0].size(), 0);
  for (const auto& r : rows) {
    for (size_t i = 0; i < r.size(); ++i) width[i] = std::max(width[i], r[i].size());
  }
  for (const auto& r : rows) {
    std::string line;
    for (size_t i = 0; i < r.size(); ++i) {
      line += r[i];
      if (i + 1 < r.size()) line += std::string(width[i] - r[i].size() + 2, ' ');
    }
    in.env.out << line << "\n";
  }
  in.env.out << found->size() << " target(s)\n" << std::flush;
  return kExitOk;
}

void TargetsFlags(po::options_description& d) {
  d.add_options()("json", "print a JSON array: target, configured, queues, backlogged, idle_s");
}

}  // namespace

GateOptions TargetGateOptions(const std::string& node_url, const std::string& target) {
  GateOptions o;
  o.url = node_url;
  o.target = target;
  o.connect_timeout_ms = 1000;
  o.command_timeout_ms = 5000;
  return o;
}

Result<GateState> StateOfTarget(const TargetOnNode& t) {
  auto st = GateAdmin(TargetGateOptions(t.node_url, t.target)).State();
  if (!st.ok()) {
    return Status(st.status().code(), "state of " + t.target + ": " + st.status().ToString());
  }
  return st;
}

Result<std::vector<TargetOnNode>> ScanTargets(const std::string& url) {
  auto nodes = NodesToScan(url);
  if (!nodes.ok()) {
    return Status::Unavailable("cannot reach Valkey at " + RedactValkeyUrl(url) + ": " +
                               nodes.status().ToString());
  }
  std::vector<TargetOnNode> out;
  for (const std::string& node : *nodes) {
    ValkeyConnection conn(ValkeyOptions{node, 1000, 5000});
    if (Status s = conn.Connect(); !s.ok()) {
      return Status::Unavailable("cannot reach Valkey at " + RedactValkeyUrl(node) + ": " +
                                 s.ToString());
    }
    std::string cursor = "0";
    do {
      auto page = conn.Command({"SCAN", cursor, "MATCH", "bp:{*}:state", "COUNT", "1000"});
      if (!page.ok() || page->is_error() || page->elements.size() != 2) {
        return Status::Unavailable("SCAN failed: " +
                                   (page.ok() ? page->str : page.status().ToString()));
      }
      cursor = page->elements[0].AsString();
      for (const ValkeyReply& k : page->elements[1].elements) {
        // Other keys match too, e.g. a dry-run copy bp:{T}:dry:<hex>:state.
        if (std::string t = TargetOf(k.str); !t.empty()) out.push_back({node, t});
      }
    } while (cursor != "0");
  }
  std::sort(out.begin(), out.end(),
            [](const TargetOnNode& a, const TargetOnNode& b) { return a.target < b.target; });
  return out;
}

int RequireExistingTarget(const Invocation& in, const char* command) {
  if (in.env.create) return -1;
  auto found = ScanTargets(in.env.url);
  if (!found.ok()) return in.env.Fail(kExitServer, found.status().message());
  std::vector<std::string> names;
  for (const TargetOnNode& t : *found) {
    if (t.target == in.env.target) return -1;
    names.push_back(t.target);
  }
  std::string message = std::string(command) + ": target " + in.env.target + " does not exist in " +
                        RedactValkeyUrl(in.env.url) +
                        " (no worker or bpctl has written it; a typo?)";
  const std::vector<std::string> near = ClosestNames(in.env.target, names);
  if (!near.empty()) {
    message += "; closest existing: ";
    for (size_t i = 0; i < near.size(); ++i) message += (i ? ", " : "") + near[i];
  } else if (names.empty()) {
    message += "; no target exists there yet";
  } else {
    message += "; `bpctl targets` lists the " + std::to_string(names.size()) + " there";
  }
  message += ". Give --create to make a new target.";
  return in.env.Fail(kExitBadValue, message);
}

std::vector<Command> TargetsCommands() {
  return {
      {"targets",
       "[--json]",
       "every gate target of the database: configured, queues, last admission",
       "Lists the targets of the Valkey database (--target is ignored; a cluster URL:\n"
       "every primary of its slot map), sorted by name: whether caps are configured,\n"
       "the number of active queues and of backlogged ones, and how long ago the last\n"
       "admission was (server time; never: configured but not admitted to yet, or\n"
       "not since a `bpctl reset`).\n\n"
       "Examples:\n"
       "  bpctl targets\n"
       "  bpctl --valkey redis+cluster://127.0.0.1:7000 targets --json\n",
       {},
       TargetsFlags,
       TargetsCmd},
  };
}

}  // namespace bp::bpctl
