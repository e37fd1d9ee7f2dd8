// bp::ValkeyConnection - a small synchronous Valkey/Redis client over hiredis,
// the transport under the gate (bp::Gate), bpctl and the benchmarks. It knows
// no script of the gate's: scripts are bodies its callers pass.
//
// URL forms (parsed by ParseValkeyUrl):
//   redis://[[user]:password@]host[:port][/db]   (port 6379, db 0 by default)
//   unix:///path/to/socket[?db=N]
//   redis+cluster://[[user]:password@]host[:port][,host[:port]...]
//     a Redis/Valkey Cluster: the hosts are seeds for slot-map discovery
//     (port 6379 by default; no db: a cluster has only db 0). Commands are
//     routed to the primary owning their slot, following MOVED and ASK
//     (bp/valkey_cluster.h).
// A password without a user sends AUTH password; with a user, AUTH user
// password (ACL). The db is selected with SELECT after connecting.
//
// Errors: no exceptions. Transport failures (refused, reset, timed out) come
// back as a non-ok Status (kUnavailable, or kTimeout when the command timeout
// expired) and close the connection; the next call reconnects. A server error
// reply (-ERR ...) is NOT a transport failure: it is returned as a reply of
// type kError, and the connection stays usable.
//
// In cluster mode every command of a connection goes to the slot of
// the constructor's route_key (bp::Gate sets it to "bp:{target}", so all of a
// target's calls reach the primary that owns its hash tag); without a route
// key, EvalScript routes by its first key and Command by args[1].
//
// Thread-safety: a ValkeyConnection is NOT thread-safe; serialize calls on one
// object (bp::Gate holds one behind a mutex). Distinct objects are independent.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "bp/status.h"

namespace bp {

struct ValkeyUrl {
  bool unix_socket = false;
  std::string host = "127.0.0.1";
  int port = 6379;
  std::string path;  // unix socket path
  std::string user;  // empty: AUTH with password only
  std::string password;
  int db = 0;
  // redis+cluster:// only: the seed nodes, in URL order (host/port above are
  // the first seed).
  bool cluster = false;
  std::vector<std::pair<std::string, int>> seeds;
};

// Parses the URL forms above. InvalidArgument with the reason on bad input
// (unknown scheme, empty host, port outside 1..65535, non-numeric db).
Result<ValkeyUrl> ParseValkeyUrl(std::string_view url);

// The URL as it may be shown in messages and logs: the password of a
// redis:// or redis+cluster:// URL replaced by "***" (`redis://u:***@h:1`,
// `redis://***@h`); any other text unchanged.
std::string RedactValkeyUrl(std::string_view url);

// The server's name and version from the text of an INFO server reply:
// "valkey 9.1.2" (valkey_version; Valkey also reports redis_version 7.2.4 for
// compatibility, so that is read only without valkey_version), else
// "redis 7.0.15" (redis_version). Empty when neither field is present.
std::string ServerFromInfo(std::string_view info);

// One decoded RESP2 reply.
struct ValkeyReply {
  enum class Type { kNil, kInteger, kString, kStatus, kError, kArray };
  Type type = Type::kNil;
  int64_t integer = 0;                // kInteger
  std::string str;                    // kString, kStatus, kError
  std::vector<ValkeyReply> elements;  // kArray

  bool is_error() const { return type == Type::kError; }
  // The reply as text: str for strings/status/errors, the decimal integer for
  // kInteger, "" otherwise.
  std::string AsString() const;
};

struct ValkeyOptions {
  std::string url = "redis://127.0.0.1:6379";
  int connect_timeout_ms = 100;  // TCP/unix connect, AUTH and SELECT
  int command_timeout_ms = 20;   // each command's send + receive (per hop in a cluster)
};

class ValkeyCluster;

class ValkeyConnection {
 public:
  // route_key: cluster mode only, the key whose hash slot picks the node for
  // every command ("" = route each command by its own key, see above).
  explicit ValkeyConnection(ValkeyOptions options, std::string route_key = "");
  ~ValkeyConnection();
  ValkeyConnection(const ValkeyConnection&) = delete;
  ValkeyConnection& operator=(const ValkeyConnection&) = delete;

  // Connects (closing any previous connection), authenticates, selects the db.
  // Unavailable when the server cannot be reached or refuses AUTH;
  // InvalidArgument when it refuses the SELECT ("valkey: the server refused
  // SELECT 99 (the db 99 of the URL): ERR DB index is out of range").
  // connect_timeout_ms = 0 uses options().connect_timeout_ms.
  Status Connect(int connect_timeout_ms = 0);
  bool connected() const;
  void Close();

  // Sends one command (binary-safe arguments). Connects first if needed.
  Result<ValkeyReply> Command(const std::vector<std::string>& args);

  // How long a script's text lives. kStatic: the caller promises `body`
  // points at text that lives and never changes for the whole program (a
  // script embedded at build time); its SHA1 is then found by address
  // instead of by comparing whole bodies (tens of KB when scripts share a
  // prelude). kTransient: any other text, found by content.
  enum class ScriptText { kTransient, kStatic };

  // EVALSHA of a script, loading it (SCRIPT LOAD) the first time and again
  // when the server answers NOSCRIPT (a restarted server has an empty script
  // cache). The script is identified by its body; SHA1s are cached per body.
  Result<ValkeyReply> EvalScript(std::string_view body, const std::vector<std::string>& keys,
                                 const std::vector<std::string>& args,
                                 ScriptText text = ScriptText::kTransient);

  const ValkeyOptions& options() const { return options_; }
  // The cluster router (redirect counters, slot owners), or null when the URL
  // is not redis+cluster://.
  ValkeyCluster* cluster() const { return cluster_.get(); }

 private:
  Result<std::string> LoadScript(std::string_view body);
  // EVALSHA sha; on NOSCRIPT, SCRIPT LOAD body and one retry.
  Result<ValkeyReply> EvalSha(const std::string& sha, std::string_view body,
                              const std::vector<std::string>& keys,
                              const std::vector<std::string>& args);
  int RouteSlot(const std::string* key) const;

  ValkeyOptions options_;
  std::string route_key_;
  struct Context;
  std::unique_ptr<Context> ctx_;
  std::map<std::string, std::string, std::less<>> sha_by_body_;
  // SHA1s of ScriptText::kStatic bodies, by address.
  std::vector<std::pair<const char*, std::string>> sha_by_static_;
  std::unique_ptr<ValkeyCluster> cluster_;  // redis+cluster:// only
};

}  // namespace bp
