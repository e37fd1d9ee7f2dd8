// Valkey connection over hiredis 0.14 (blocking context with socket timeouts).
// See bp/valkey.h for the URL forms, error model and thread-safety.
#include "bp/valkey.h"

#include <hiredis/hiredis.h>

#include <cerrno>
#include <charconv>

#include "bp/valkey_cluster.h"

namespace bp {
namespace {

bool ParseInt(std::string_view s, int* out) {
  if (s.empty()) return false;
  auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), *out);
  return ec == std::errc() && p == s.data() + s.size();
}

ValkeyReply Convert(const redisReply* r) {
  ValkeyReply out;
  switch (r->type) {
    case REDIS_REPLY_INTEGER:
      out.type = ValkeyReply::Type::kInteger;
      out.integer = r->integer;
      break;
    case REDIS_REPLY_STRING:
      out.type = ValkeyReply::Type::kString;
      out.str.assign(r->str, r->len);
      break;
    case REDIS_REPLY_STATUS:
      out.type = ValkeyReply::Type::kStatus;
      out.str.assign(r->str, r->len);
      break;
    case REDIS_REPLY_ERROR:
      out.type = ValkeyReply::Type::kError;
      out.str.assign(r->str, r->len);
      break;
    case REDIS_REPLY_ARRAY:
      out.type = ValkeyReply::Type::kArray;
      out.elements.reserve(r->elements);
      for (size_t i = 0; i < r->elements; ++i) out.elements.push_back(Convert(r->element[i]));
      break;
    default:
      out.type = ValkeyReply::Type::kNil;
  }
  return out;
}

timeval Tv(int ms) {
  if (ms <= 0) ms = 1;
  return timeval{ms / 1000, (ms % 1000) * 1000};
}

}  // namespace

std::string ValkeyReply::AsString() const {
  switch (type) {
    case Type::kInteger:
      return std::to_string(integer);
    case Type::kString:
    case Type::kStatus:
    case Type::kError:
      return str;
    default:
      return {};
  }
}

std::string ServerFromInfo(std::string_view info) {
  auto field = [&](std::string_view name) -> std::string {
    for (size_t at = 0; at < info.size();) {
      size_t end = info.find('\n', at);
      if (end == std::string_view::npos) end = info.size();
      std::string_view line = info.substr(at, end - at);
      if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
      if (line.size() > name.size() && line.substr(0, name.size()) == name &&
          line[name.size()] == ':') {
        return std::string(line.substr(name.size() + 1));
      }
      at = end + 1;
    }
    return "";
  };
  if (std::string v = field("valkey_version"); !v.empty()) return "valkey " + v;
  if (std::string v = field("redis_version"); !v.empty()) return "redis " + v;
  return "";
}

std::string RedactValkeyUrl(std::string_view url) {
  const size_t scheme = url.find("://");
  if (scheme == std::string_view::npos) return std::string(url);
  const std::string_view name = url.substr(0, scheme);
  if (name != "redis" && name != "redis+cluster") return std::string(url);
  const std::string_view rest = url.substr(scheme + 3);
  const size_t at = rest.rfind('@');
  if (at == std::string_view::npos) return std::string(url);
  const std::string_view cred = rest.substr(0, at);
  const size_t colon = cred.find(':');
  std::string out(url.substr(0, scheme + 3));
  if (colon != std::string_view::npos) out += std::string(cred.substr(0, colon + 1));
  out += "***";
  out += rest.substr(at);
  return out;
}

Result<ValkeyUrl> ParseValkeyUrl(std::string_view url) {
  ValkeyUrl out;
  constexpr std::string_view kUnix = "unix://", kRedis = "redis://";
  constexpr std::string_view kCluster = "redis+cluster://";
  if (url.substr(0, kUnix.size()) == kUnix) {
    out.unix_socket = true;
    std::string_view rest = url.substr(kUnix.size());
    if (auto q = rest.find("?db="); q != std::string_view::npos) {
      if (!ParseInt(rest.substr(q + 4), &out.db) || out.db < 0) {
        return Status::InvalidArgument("bad db in valkey url: " + RedactValkeyUrl(url));
      }
      rest = rest.substr(0, q);
    }
    if (rest.empty() || rest[0] != '/') {
      return Status::InvalidArgument("unix url needs an absolute path: " + RedactValkeyUrl(url));
    }
    out.path = std::string(rest);
    return out;
  }
  const bool cluster = url.substr(0, kCluster.size()) == kCluster;
  if (!cluster && url.substr(0, kRedis.size()) != kRedis) {
    return Status::InvalidArgument(
        "valkey url must start with redis+cluster://, redis:// or unix://, got " +
        RedactValkeyUrl(url));
  }
  std::string_view rest = url.substr(cluster ? kCluster.size() : kRedis.size());
  if (auto at = rest.rfind('@'); at != std::string_view::npos) {
    std::string_view cred = rest.substr(0, at);
    rest = rest.substr(at + 1);
    if (auto colon = cred.find(':'); colon != std::string_view::npos) {
      out.user = std::string(cred.substr(0, colon));
      out.password = std::string(cred.substr(colon + 1));
    } else {
      out.password = std::string(cred);  // redis://secret@host
    }
  }
  if (auto slash = rest.find('/'); slash != std::string_view::npos) {
    std::string_view db = rest.substr(slash + 1);
    if (!db.empty() && (!ParseInt(db, &out.db) || out.db < 0)) {
      return Status::InvalidArgument("bad db in valkey url: " + RedactValkeyUrl(url));
    }
    if (cluster && out.db != 0) {
      return Status::InvalidArgument("a cluster has only db 0: " + RedactValkeyUrl(url));
    }
    rest = rest.substr(0, slash);
  }
  out.cluster = cluster;
  while (true) {  // one host[:port], or a comma-separated list of seeds (cluster)
    const size_t comma = cluster ? rest.find(',') : std::string_view::npos;
    std::string_view hp = rest.substr(0, comma);
    int port = 6379;
    if (auto colon = hp.rfind(':'); colon != std::string_view::npos) {
      if (!ParseInt(hp.substr(colon + 1), &port) || port < 1 || port > 65535) {
        return Status::InvalidArgument("bad port in valkey url: " + RedactValkeyUrl(url));
      }
      hp = hp.substr(0, colon);
    }
    if (hp.empty()) {
      return Status::InvalidArgument("empty host in valkey url: " + RedactValkeyUrl(url));
    }
    if (hp.find(',') != std::string_view::npos) {
      return Status::InvalidArgument("a list of hosts needs redis+cluster://: " +
                                     RedactValkeyUrl(url));
    }
    out.seeds.emplace_back(std::string(hp), port);
    if (comma == std::string_view::npos) break;
    rest = rest.substr(comma + 1);
  }
  out.host = out.seeds[0].first;
  out.port = out.seeds[0].second;
  if (!cluster) out.seeds.clear();
  return out;
}

struct ValkeyConnection::Context {
  redisContext* c = nullptr;
  ~Context() {
    if (c) redisFree(c);
  }
};

ValkeyConnection::ValkeyConnection(ValkeyOptions options, std::string route_key)
    : options_(std::move(options)), route_key_(std::move(route_key)) {
  // A bad URL is reported by Connect; a cluster URL routes through cluster_.
  if (auto url = ParseValkeyUrl(options_.url); url.ok() && url->cluster) {
    cluster_ = std::make_unique<ValkeyCluster>(*url, options_);
  }
}
ValkeyConnection::~ValkeyConnection() = default;

int ValkeyConnection::RouteSlot(const std::string* key) const {
  if (!route_key_.empty()) return KeySlot(route_key_);
  return key ? KeySlot(*key) : 0;
}

bool ValkeyConnection::connected() const {
  if (cluster_) return cluster_->connected(RouteSlot(nullptr));
  return ctx_ && ctx_->c && ctx_->c->err == 0;
}

void ValkeyConnection::Close() {
  if (cluster_) cluster_->Close();
  ctx_.reset();
}

Status ValkeyConnection::Connect(int connect_timeout_ms) {
  Close();
  if (cluster_) {
    return cluster_->Connect(RouteSlot(nullptr), connect_timeout_ms > 0
                                                     ? connect_timeout_ms
                                                     : options_.connect_timeout_ms);
  }
  auto url = ParseValkeyUrl(options_.url);
  if (!url.ok()) return url.status();
  const timeval ctv = Tv(connect_timeout_ms > 0 ? connect_timeout_ms : options_.connect_timeout_ms);
  auto ctx = std::make_unique<Context>();
  ctx->c = url->unix_socket ? redisConnectUnixWithTimeout(url->path.c_str(), ctv)
                            : redisConnectWithTimeout(url->host.c_str(), url->port, ctv);
  if (!ctx->c) return Status::Unavailable("valkey: out of memory allocating a context");
  if (ctx->c->err) {
    return Status::Unavailable("valkey connect " + RedactValkeyUrl(options_.url) + ": " +
                               ctx->c->errstr);
  }
  // AUTH and SELECT run under the connect timeout, then the command timeout.
  redisSetTimeout(ctx->c, ctv);
  ctx_ = std::move(ctx);
  if (!url->password.empty()) {
    std::vector<std::string> auth = {"AUTH"};
    if (!url->user.empty()) auth.push_back(url->user);
    auth.push_back(url->password);
    auto r = Command(auth);
    if (!r.ok()) return r.status();
    if (r->is_error()) {
      Close();
      return Status::Unavailable("valkey AUTH: " + r->str);
    }
  }
  if (url->db != 0) {
    auto r = Command({"SELECT", std::to_string(url->db)});
    if (!r.ok()) return r.status();
    if (r->is_error()) {
      Close();
      const std::string db = std::to_string(url->db);
      return Status::InvalidArgument("valkey: the server refused SELECT " + db + " (the db " + db +
                                     " of the URL): " + r->str);
    }
  }
  redisSetTimeout(ctx_->c, Tv(options_.command_timeout_ms));
  return Status::Ok();
}

Result<ValkeyReply> ValkeyConnection::Command(const std::vector<std::string>& args) {
  if (cluster_) return cluster_->Command(RouteSlot(args.size() > 1 ? &args[1] : nullptr), args);
  if (!connected()) {
    if (Status s = Connect(); !s.ok()) return s;
  }
  std::vector<const char*> argv;
  std::vector<size_t> lens;
  argv.reserve(args.size());
  lens.reserve(args.size());
  for (const auto& a : args) {
    argv.push_back(a.data());
    lens.push_back(a.size());
  }
  errno = 0;
  auto* reply = static_cast<redisReply*>(
      redisCommandArgv(ctx_->c, static_cast<int>(argv.size()), argv.data(), lens.data()));
  if (!reply) {
    const bool timed_out = errno == EAGAIN || errno == EWOULDBLOCK;
    std::string why = ctx_->c->errstr;
    Close();
    if (timed_out) {
      return Status::Timeout("valkey: no answer within " +
                             std::to_string(options_.command_timeout_ms) + " ms");
    }
    return Status::Unavailable("valkey " + RedactValkeyUrl(options_.url) + ": " + why);
  }
  ValkeyReply out = Convert(reply);
  freeReplyObject(reply);
  return out;
}

Result<std::string> ValkeyConnection::LoadScript(std::string_view body) {
  auto r = Command({"SCRIPT", "LOAD", std::string(body)});
  if (!r.ok()) return r.status();
  if (r->type != ValkeyReply::Type::kString) {
    return Status::Internal("valkey SCRIPT LOAD: " + r->AsString());
  }
  sha_by_body_[std::string(body)] = r->str;
  return r->str;
}

Result<ValkeyReply> ValkeyConnection::EvalScript(std::string_view body,
                                                 const std::vector<std::string>& keys,
                                                 const std::vector<std::string>& args,
                                                 ScriptText text) {
  if (cluster_) {
    return cluster_->EvalScript(RouteSlot(keys.empty() ? nullptr : &keys[0]), body, keys, args);
  }
  const bool is_static = text == ScriptText::kStatic;
  const std::string* sha = nullptr;
  if (is_static) {
    for (const auto& [at, s] : sha_by_static_) {
      if (at == body.data()) sha = &s;
    }
  }
  if (!sha) {
    std::string found;
    if (auto it = sha_by_body_.find(body); it != sha_by_body_.end()) {
      found = it->second;
    } else {
      auto loaded = LoadScript(body);
      if (!loaded.ok()) return loaded.status();
      found = *loaded;
    }
    if (!is_static) return EvalSha(found, body, keys, args);
    sha = &sha_by_static_.emplace_back(body.data(), std::move(found)).second;
  }
  return EvalSha(*sha, body, keys, args);
}

Result<ValkeyReply> ValkeyConnection::EvalSha(const std::string& sha, std::string_view body,
                                              const std::vector<std::string>& keys,
                                              const std::vector<std::string>& args) {
  std::vector<std::string> cmd;
  cmd.reserve(3 + keys.size() + args.size());
  cmd.push_back("EVALSHA");
  cmd.push_back(sha);
  cmd.push_back(std::to_string(keys.size()));
  cmd.insert(cmd.end(), keys.begin(), keys.end());
  cmd.insert(cmd.end(), args.begin(), args.end());
  auto r = Command(cmd);
  if (!r.ok() || !r->is_error() || r->str.rfind("NOSCRIPT", 0) != 0) return r;
  // Restarted or flushed server: load again and retry once.
  auto loaded = LoadScript(body);
  if (!loaded.ok()) return loaded.status();
  cmd[1] = *loaded;
  return Command(cmd);
}

}  // namespace bp
