// Cluster routing over plain ValkeyConnections, one per primary.
// See bp/valkey_cluster.h for the protocol and why resends are safe.
#include "bp/valkey_cluster.h"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <chrono>
#include <thread>

namespace bp {
namespace {

std::string Addr(const std::string& host, int port) { return host + ":" + std::to_string(port); }

bool StartsWith(std::string_view s, std::string_view prefix) {
  return s.substr(0, prefix.size()) == prefix;
}

bool EqualsIgnoreCase(std::string_view a, std::string_view b) {
  return a.size() == b.size() && std::equal(a.begin(), a.end(), b.begin(), [](char x, char y) {
           return std::tolower(static_cast<unsigned char>(x)) ==
                  std::tolower(static_cast<unsigned char>(y));
         });
}

bool IsError(const ValkeyReply& r, std::string_view code) {
  return r.is_error() && StartsWith(r.str, code);
}

// "redis://[user:password@]host:port" for one node, with the seeds' credentials.
std::string NodeUrl(const ValkeyUrl& url, const std::string& addr) {
  std::string out = "redis://";
  if (!url.password.empty()) out += url.user + ":" + url.password + "@";
  return out + addr;
}

}  // namespace

uint16_t Crc16Xmodem(std::string_view data) {
  uint16_t crc = 0;
  for (unsigned char byte : data) {
    crc ^= static_cast<uint16_t>(byte << 8);
    for (int bit = 0; bit < 8; ++bit) {
      crc = (crc & 0x8000) ? static_cast<uint16_t>((crc << 1) ^ 0x1021)
                           : static_cast<uint16_t>(crc << 1);
    }
  }
  return crc;
}

int KeySlot(std::string_view key) {
  if (auto open = key.find('{'); open != std::string_view::npos) {
    if (auto close = key.find('}', open + 1); close != std::string_view::npos && close > open + 1) {
      key = key.substr(open + 1, close - open - 1);
    }
  }
  return Crc16Xmodem(key) & (kClusterSlots - 1);
}

Result<std::vector<ClusterSlotRange>> ParseClusterSlots(const ValkeyReply& reply,
                                                        const std::string& queried_host) {
  if (reply.type != ValkeyReply::Type::kArray) {
    return Status::Internal("CLUSTER SLOTS: not an array: " + reply.AsString());
  }
  std::vector<ClusterSlotRange> out;
  for (const ValkeyReply& e : reply.elements) {
    const auto& el = e.elements;
    if (e.type != ValkeyReply::Type::kArray || el.size() < 3 ||
        el[0].type != ValkeyReply::Type::kInteger || el[1].type != ValkeyReply::Type::kInteger ||
        el[2].type != ValkeyReply::Type::kArray || el[2].elements.size() < 2 ||
        el[2].elements[1].type != ValkeyReply::Type::kInteger) {
      return Status::Internal("CLUSTER SLOTS: malformed range");
    }
    // Bounds on the 64-bit integers as sent, before narrowing: slot
    // 4294967301 must not read as slot 5.
    const int64_t first = el[0].integer, last = el[1].integer;
    const int64_t port = el[2].elements[1].integer;
    if (first < 0 || last < first || last >= kClusterSlots || port < 1 || port > 65535) {
      return Status::Internal("CLUSTER SLOTS: range out of bounds");
    }
    ClusterSlotRange r;
    r.first = static_cast<int>(first);
    r.last = static_cast<int>(last);
    r.host = el[2].elements[0].AsString();
    if (r.host.empty() || r.host == "?") r.host = queried_host;
    r.port = static_cast<int>(port);
    out.push_back(std::move(r));
  }
  return out;
}

std::optional<ClusterRedirect> ParseClusterRedirect(const ValkeyReply& reply) {
  if (!reply.is_error()) return std::nullopt;
  ClusterRedirect r;
  std::string_view s = reply.str;
  if (StartsWith(s, "MOVED ")) {
    s.remove_prefix(6);
  } else if (StartsWith(s, "ASK ")) {
    r.ask = true;
    s.remove_prefix(4);
  } else {
    return std::nullopt;
  }
  const size_t space = s.find(' ');
  const size_t colon = s.rfind(':');
  if (space == std::string_view::npos || colon == std::string_view::npos || colon < space) {
    return std::nullopt;
  }
  auto num = [](std::string_view t, int* out) {
    auto [p, ec] = std::from_chars(t.data(), t.data() + t.size(), *out);
    return ec == std::errc() && p == t.data() + t.size();
  };
  if (!num(s.substr(0, space), &r.slot) || !num(s.substr(colon + 1), &r.port)) return std::nullopt;
  r.host = std::string(s.substr(space + 1, colon - space - 1));
  if (r.slot < 0 || r.slot >= kClusterSlots || r.port < 1 || r.port > 65535) return std::nullopt;
  return r;
}

// How one command is sent to one node; `asking` prefixes ASKING.
struct ValkeyCluster::Send {
  virtual ~Send() = default;
  virtual Result<ValkeyReply> operator()(ValkeyConnection& node, bool asking) const = 0;
};

namespace {

Result<ValkeyReply> SendOnce(ValkeyConnection& node, const std::vector<std::string>& args,
                             bool asking) {
  if (asking) {
    // ASKING flags only the next command of this connection.
    auto a = node.Command({"ASKING"});
    if (!a.ok() || a->is_error()) return a;
  }
  return node.Command(args);
}

}  // namespace

ValkeyCluster::ValkeyCluster(const ValkeyUrl& url, const ValkeyOptions& options)
    : url_(url), options_(options), owner_(kClusterSlots, -1) {}

ValkeyCluster::~ValkeyCluster() = default;

ValkeyConnection& ValkeyCluster::Node(const std::string& addr) {
  auto& slot = nodes_[addr];
  if (!slot) {
    ValkeyOptions o = options_;
    o.url = NodeUrl(url_, addr);
    slot = std::make_unique<ValkeyConnection>(std::move(o));
  }
  return *slot;
}

std::string ValkeyCluster::OwnerOf(int slot) const {
  if (slot < 0 || slot >= kClusterSlots || owner_[slot] < 0) return "";
  return addrs_[owner_[slot]];
}

Status ValkeyCluster::RefreshSlots(const std::string& first) {
  std::vector<std::string> candidates;
  if (!first.empty()) candidates.push_back(first);
  for (const auto& a : addrs_) candidates.push_back(a);
  for (const auto& [host, port] : url_.seeds) candidates.push_back(Addr(host, port));
  // The node that last failed a call is asked last (it is likely down).
  std::stable_partition(candidates.begin(), candidates.end(),
                        [&](const std::string& a) { return a != last_failed_; });
  std::string errors;  // "host:port: why" of every node tried, in order
  std::vector<std::string> tried;
  for (const std::string& addr : candidates) {
    if (std::find(tried.begin(), tried.end(), addr) != tried.end()) continue;
    tried.push_back(addr);
    auto r = Node(addr).Command({"CLUSTER", "SLOTS"});
    Status failed = r.ok() ? Status::Ok() : r.status();
    Result<std::vector<ClusterSlotRange>> ranges = std::vector<ClusterSlotRange>{};
    if (failed.ok()) {
      ranges = ParseClusterSlots(*r, addr.substr(0, addr.rfind(':')));
      if (!ranges.ok()) failed = ranges.status();
    }
    if (!failed.ok()) {
      errors += (errors.empty() ? "" : "; ") + addr + ": " + failed.message();
      continue;
    }
    addrs_.clear();
    std::fill(owner_.begin(), owner_.end(), -1);
    for (const ClusterSlotRange& range : *ranges) {
      const std::string owner = Addr(range.host, range.port);
      auto it = std::find(addrs_.begin(), addrs_.end(), owner);
      if (it == addrs_.end()) it = addrs_.insert(addrs_.end(), owner);
      const auto index = static_cast<int16_t>(it - addrs_.begin());
      std::fill(owner_.begin() + range.first, owner_.begin() + range.last + 1, index);
    }
    map_stale_ = false;
    return Status::Ok();
  }
  if (tried.empty()) return Status::Unavailable("valkey cluster: no seed nodes");
  return Status::Unavailable("valkey cluster: no node answered CLUSTER SLOTS (" +
                             std::to_string(tried.size()) + " tried): " + errors);
}

Status ValkeyCluster::Connect(int slot, int connect_timeout_ms) {
  if (Status s = RefreshSlots(); !s.ok()) return s;
  const std::string owner = OwnerOf(slot);
  if (owner.empty()) {
    return Status::Unavailable("valkey cluster: slot " + std::to_string(slot) + " has no owner");
  }
  ValkeyConnection& node = Node(owner);
  if (node.connected()) return Status::Ok();
  return node.Connect(connect_timeout_ms);
}

bool ValkeyCluster::connected(int slot) const {
  const std::string owner = OwnerOf(slot);
  if (map_stale_ || owner.empty()) return false;
  auto it = nodes_.find(owner);
  return it != nodes_.end() && it->second->connected();
}

void ValkeyCluster::Close() {
  for (auto& [addr, node] : nodes_) node->Close();
  in_multi_ = false;
}

Result<ValkeyReply> ValkeyCluster::Route(int slot, const Send& send) {
  std::string ask_addr;  // set for one hop after an ASK
  for (int hop = 0; hop < kMaxHops; ++hop) {
    std::string addr = ask_addr;
    const bool asking = !addr.empty();
    ask_addr.clear();
    if (!asking) {
      if (map_stale_ || OwnerOf(slot).empty()) {
        if (Status s = RefreshSlots(); !s.ok()) return s;
      }
      addr = OwnerOf(slot);
      if (addr.empty()) {
        return Status::Unavailable("valkey cluster: slot " + std::to_string(slot) +
                                   " has no owner");
      }
    }
    auto r = send(Node(addr), asking);
    if (!r.ok()) {
      // Transport failure or timeout: the command may have run, so it is not
      // resent; the map is reloaded before the next command (failover).
      map_stale_ = true;
      last_failed_ = addr;
      return r;
    }
    if (in_multi_) return r;  // redirections inside MULTI go back to the caller
    if (auto redirect = ParseClusterRedirect(*r)) {
      // MOVED and ASK are answered before the command runs: resending it is
      // safe even for the admission script (no double debit).
      // An empty host (an endpoint the node does not know) means the host
      // of the node that answered.
      const std::string to =
          Addr(redirect->host.empty() ? addr.substr(0, addr.rfind(':')) : redirect->host,
               redirect->port);
      if (redirect->ask) {
        ++asks_;
        ask_addr = to;  // one-shot; the map stays as it is
        continue;
      }
      ++moved_;
      if (!RefreshSlots(to).ok() || OwnerOf(redirect->slot) != to) {
        // The reloaded map may lag the MOVED (epochs propagate by gossip):
        // trust the node that answered for this slot.
        auto it = std::find(addrs_.begin(), addrs_.end(), to);
        if (it == addrs_.end()) it = addrs_.insert(addrs_.end(), to);
        owner_[redirect->slot] = static_cast<int16_t>(it - addrs_.begin());
        map_stale_ = false;
      }
      continue;
    }
    if (IsError(*r, "TRYAGAIN")) {  // keys split mid-migration: not run, retry
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
      continue;
    }
    return r;
  }
  return Status::Unavailable("valkey cluster: slot " + std::to_string(slot) +
                             " still redirected after " + std::to_string(kMaxHops) + " sends");
}

Result<ValkeyReply> ValkeyCluster::Command(int slot, const std::vector<std::string>& args) {
  struct Plain : Send {
    const std::vector<std::string>& args;
    explicit Plain(const std::vector<std::string>& a) : args(a) {}
    Result<ValkeyReply> operator()(ValkeyConnection& node, bool asking) const override {
      return SendOnce(node, args, asking);
    }
  };
  auto r = Route(slot, Plain(args));
  if (!args.empty()) {
    if (EqualsIgnoreCase(args[0], "MULTI") && r.ok() && !r->is_error()) in_multi_ = true;
    if (EqualsIgnoreCase(args[0], "EXEC") || EqualsIgnoreCase(args[0], "DISCARD")) {
      in_multi_ = false;
    }
  }
  if (!r.ok()) in_multi_ = false;  // the connection was closed
  return r;
}

Result<ValkeyReply> ValkeyCluster::EvalScript(int slot, std::string_view body,
                                              const std::vector<std::string>& keys,
                                              const std::vector<std::string>& args) {
  std::vector<std::string> cmd;
  cmd.reserve(3 + keys.size() + args.size());
  cmd.push_back("EVALSHA");
  if (auto it = sha_by_body_.find(body); it != sha_by_body_.end()) {
    cmd.push_back(it->second);
  } else {
    cmd.emplace_back();  // loaded on the first node it is sent to
  }
  cmd.push_back(std::to_string(keys.size()));
  cmd.insert(cmd.end(), keys.begin(), keys.end());
  cmd.insert(cmd.end(), args.begin(), args.end());
  struct Script : Send {
    ValkeyCluster* self;
    std::string_view body;
    std::vector<std::string>* cmd;
    Status Load(ValkeyConnection& node) const {
      auto r = node.Command({"SCRIPT", "LOAD", std::string(body)});
      if (!r.ok()) return r.status();
      if (r->type != ValkeyReply::Type::kString) {
        return Status::Internal("valkey SCRIPT LOAD: " + r->AsString());
      }
      self->sha_by_body_[std::string(body)] = r->str;
      (*cmd)[1] = r->str;
      return Status::Ok();
    }
    Result<ValkeyReply> operator()(ValkeyConnection& node, bool asking) const override {
      if ((*cmd)[1].empty()) {
        if (Status l = Load(node); !l.ok()) return l;
      }
      auto r = SendOnce(node, *cmd, asking);
      if (!r.ok() || !IsError(*r, "NOSCRIPT")) return r;
      // This node never loaded the script (new owner after a resharding, or
      // restarted): NOSCRIPT means nothing ran; load it here and resend.
      if (Status l = Load(node); !l.ok()) return l;
      return SendOnce(node, *cmd, asking);
    }
  };
  Script script;
  script.self = this;
  script.body = body;
  script.cmd = &cmd;
  return Route(slot, script);
}

}  // namespace bp
