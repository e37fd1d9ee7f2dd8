// bp::ValkeyCluster - Redis/Valkey Cluster routing for a ValkeyConnection whose
// URL is redis+cluster://seed[,seed...] (see bp/valkey.h). Small on purpose:
// Debian 12's archive has no cluster client (hiredis-cluster is absent), so
// this sits on the plain hiredis connections of bp::ValkeyConnection.
//
// What it does (Redis Cluster specification, "Redirection and resharding"):
//  - discovers the slot map with CLUSTER SLOTS from a known node or a seed,
//    keeping the primary of each range (replicas are never used);
//  - sends each command to the primary owning the command's slot (KeySlot:
//    CRC16/XMODEM of the key or of its {hash tag}, mod 16384);
//  - on "-MOVED slot host:port" updates the map (a fresh CLUSTER SLOTS, and
//    the named owner for that slot if the refresh fails) and resends;
//  - on "-ASK slot host:port" sends ASKING and then the command to the named
//    node, once, without touching the map (the slot is being migrated);
//  - on "-TRYAGAIN" (multi-key command during a migration) waits 1 ms and
//    resends; at most kMaxHops hops in all, then an Unavailable error;
//  - EVALSHA answered NOSCRIPT by a node (a new owner after resharding, or a
//    restarted node) loads the script on that node and resends.
// Resending after MOVED/ASK/TRYAGAIN/NOSCRIPT is safe for non-idempotent
// commands (the gate's admission script): those replies mean the node did not
// execute the command. A transport error or timeout is never resent, because
// the command may have run; it is returned (the gate then fails open) and the
// map is refreshed on the next Connect.
// Inside MULTI (until EXEC/DISCARD) redirections are returned, not followed:
// resending one queued command elsewhere would split the transaction.
//
// Units: timeouts in ms (those of ValkeyOptions, per node and per hop).
// Errors: as ValkeyConnection (non-ok Status for transport, kError replies for
// server errors, CLUSTERDOWN included).
// Thread-safety: none; owned and serialized by one ValkeyConnection.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "bp/status.h"
#include "bp/valkey.h"

namespace bp {

inline constexpr int kClusterSlots = 16384;

// CRC16-CCITT in the XMODEM variant (polynomial 0x1021, initial value 0, no
// reflection, no final xor): the key hash of the Redis Cluster specification.
// Crc16Xmodem("123456789") == 0x31C3.
uint16_t Crc16Xmodem(std::string_view data);

// The hash slot of a key, 0..16383 (spec "Hash tags"): when the key holds a
// '{' and a later '}' with at least one byte between them, only the bytes
// between the first '{' and the first '}' after it are hashed.
// KeySlot("foo") == 12182; KeySlot("{123456789}x") == 12739.
int KeySlot(std::string_view key);

// One range of a CLUSTER SLOTS reply: slots first..last owned by the primary
// at host:port.
struct ClusterSlotRange {
  int first = 0, last = 0;
  std::string host;
  int port = 0;
};

// Parses a CLUSTER SLOTS reply (primaries only). An empty host in the reply
// (a node that does not know its own address) becomes `queried_host`.
// Internal error on a malformed reply.
Result<std::vector<ClusterSlotRange>> ParseClusterSlots(const ValkeyReply& reply,
                                                        const std::string& queried_host);

// A "-MOVED slot host:port" or "-ASK slot host:port" error reply. The host
// may be empty ("MOVED 1 :7001": the host of the node that answered).
struct ClusterRedirect {
  bool ask = false;  // ASK (one-shot) rather than MOVED (permanent)
  int slot = 0;
  std::string host;
  int port = 0;
};
std::optional<ClusterRedirect> ParseClusterRedirect(const ValkeyReply& reply);

class ValkeyCluster {
 public:
  // At most this many sends per command (the first one included).
  static constexpr int kMaxHops = 6;

  // `url` is a parsed redis+cluster:// URL (seeds and credentials);
  // `options` gives the timeouts used for every node connection.
  ValkeyCluster(const ValkeyUrl& url, const ValkeyOptions& options);
  ~ValkeyCluster();
  ValkeyCluster(const ValkeyCluster&) = delete;
  ValkeyCluster& operator=(const ValkeyCluster&) = delete;

  // Reloads the slot map (CLUSTER SLOTS), then connects to the owner of
  // `slot`. Unavailable when no node answers (the message of RefreshSlots)
  // or the owner is unreachable.
  Status Connect(int slot, int connect_timeout_ms);
  // The owner of `slot` is known and its connection is open.
  bool connected(int slot) const;
  void Close();  // every node connection; the map is kept

  // One command for `slot`, routed and redirected as described above.
  Result<ValkeyReply> Command(int slot, const std::vector<std::string>& args);
  // EVALSHA (SCRIPT LOAD on a node that answers NOSCRIPT) for `slot`.
  Result<ValkeyReply> EvalScript(int slot, std::string_view body,
                                 const std::vector<std::string>& keys,
                                 const std::vector<std::string>& args);

  // Reloads the slot map from the first node that answers CLUSTER SLOTS
  // (`first`, if given, then known nodes, then the seeds; the node of the
  // last transport failure last). When none does: Unavailable naming every
  // node tried with its error, in order, e.g. "valkey cluster: no node
  // answered CLUSTER SLOTS (2 tried): h1:7000: valkey connect
  // redis://h1:7000: Connection refused; h2:7000: ..." (passwords redacted).
  Status RefreshSlots(const std::string& first = "");
  // "host:port" of the primary owning `slot` in the current map, or "".
  std::string OwnerOf(int slot) const;
  // MOVED and ASK replies followed so far (tests, diagnostics).
  uint64_t moved_count() const { return moved_; }
  uint64_t ask_count() const { return asks_; }

 private:
  struct Send;
  ValkeyConnection& Node(const std::string& addr);
  Result<ValkeyReply> Route(int slot, const Send& send);

  ValkeyUrl url_;
  ValkeyOptions options_;
  std::vector<std::string> addrs_;  // known primaries, "host:port"
  std::vector<int16_t> owner_;      // slot -> index in addrs_, -1 unknown
  std::map<std::string, std::unique_ptr<ValkeyConnection>> nodes_;
  std::map<std::string, std::string, std::less<>> sha_by_body_;
  std::string last_failed_;  // node of the last transport failure
  bool map_stale_ = true;
  bool in_multi_ = false;
  uint64_t moved_ = 0, asks_ = 0;
};

}  // namespace bp
