// libFuzzer target: Valkey/Redis URLs and cluster seed lists (valkey.h
// ParseValkeyUrl, RedactValkeyUrl): redis://, unix:// and
// redis+cluster://host:port,host:port... An accepted URL has a port in
// 1..65535 for every seed, a non-empty host, a db >= 0 (0 in a cluster) and,
// printed back in the canonical form below, parses to the same fields.
// Built by scripts/fuzz.sh (BP_FUZZ=ON).
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "bp/valkey.h"

namespace {

std::string Print(const bp::ValkeyUrl& u) {
  if (u.unix_socket) return "unix://" + u.path + "?db=" + std::to_string(u.db);
  std::string out = u.cluster ? "redis+cluster://" : "redis://";
  if (!u.user.empty() || !u.password.empty()) out += u.user + ":" + u.password + "@";
  if (u.cluster) {
    for (size_t i = 0; i < u.seeds.size(); ++i) {
      out += (i ? "," : "") + u.seeds[i].first + ":" + std::to_string(u.seeds[i].second);
    }
  } else {
    out += u.host + ":" + std::to_string(u.port);
  }
  return out + "/" + std::to_string(u.db);
}

bool Same(const bp::ValkeyUrl& a, const bp::ValkeyUrl& b) {
  return a.unix_socket == b.unix_socket && a.host == b.host && a.port == b.port &&
         a.path == b.path && a.user == b.user && a.password == b.password && a.db == b.db &&
         a.cluster == b.cluster && a.seeds == b.seeds;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  (void)bp::RedactValkeyUrl(text);
  auto u = bp::ParseValkeyUrl(text);
  if (!u.ok()) return 0;
  if (u->db < 0 || (u->cluster && u->db != 0)) __builtin_trap();
  if (!u->unix_socket) {
    if (u->host.empty() || u->port < 1 || u->port > 65535) __builtin_trap();
    if (u->cluster && (u->seeds.empty() || u->seeds[0].first != u->host)) __builtin_trap();
    for (const auto& [host, port] : u->seeds) {
      if (host.empty() || port < 1 || port > 65535) __builtin_trap();
    }
  } else if (u->path.empty() || u->path[0] != '/') {
    __builtin_trap();
  }
  auto again = bp::ParseValkeyUrl(Print(*u));
  if (!again.ok() || !Same(*u, *again)) __builtin_trap();
  return 0;
}
