// libFuzzer target: the gate client's decoding of Valkey replies. The input is
// RESP2 text (what the server sends: "*2\r\n$5\r\nADMIT\r\n$3\r\nt-1\r\n"),
// decoded here into the bp::ValkeyReply tree hiredis gives the client, then
// read as admit.lua's reply (ParseAdmitReply), as state.lua's field list
// (ReplyToDouble, FieldNumber, CapsOfFields, as GateAdmin::Config reads it), as
// a CLUSTER SLOTS reply (ParseClusterSlots) and as a MOVED/ASK redirect
// (ParseClusterRedirect). None may crash; an accepted admit reply has a
// verdict and no failure text, accepted slot ranges lie in 0..16383 with a
// port in 1..65535. Built by scripts/fuzz.sh (BP_FUZZ=ON).
#include <charconv>
#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>

#include "bp/valkey.h"
#include "bp/valkey_cluster.h"
#include "gate_internal.h"

namespace {

using bp::ValkeyReply;

// Deep enough for every script reply (state.lua nests two levels); bounds the
// recursion on hostile input.
constexpr int kMaxDepth = 8;
constexpr int64_t kMaxElements = 4096;

// One CRLF-terminated line at *pos (without the CRLF), or nullopt.
std::optional<std::string_view> Line(std::string_view in, size_t* pos) {
  const size_t end = in.find("\r\n", *pos);
  if (end == std::string_view::npos) return std::nullopt;
  std::string_view line = in.substr(*pos, end - *pos);
  *pos = end + 2;
  return line;
}

std::optional<int64_t> Int(std::string_view s) {
  int64_t v = 0;
  auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc() || p != s.data() + s.size()) return std::nullopt;
  return v;
}

std::optional<ValkeyReply> Decode(std::string_view in, size_t* pos, int depth) {
  if (*pos >= in.size() || depth > kMaxDepth) return std::nullopt;
  const char kind = in[(*pos)++];
  auto line = Line(in, pos);
  if (!line) return std::nullopt;
  ValkeyReply r;
  switch (kind) {
    case '+':
    case '-':
      r.type = kind == '+' ? ValkeyReply::Type::kStatus : ValkeyReply::Type::kError;
      r.str = std::string(*line);
      return r;
    case ':': {
      auto v = Int(*line);
      if (!v) return std::nullopt;
      r.type = ValkeyReply::Type::kInteger;
      r.integer = *v;
      return r;
    }
    case '$': {
      auto n = Int(*line);
      if (!n || *n < -1) return std::nullopt;
      if (*n == -1) return r;  // nil
      if (static_cast<uint64_t>(*n) + 2 > in.size() - *pos) return std::nullopt;
      r.type = ValkeyReply::Type::kString;
      r.str = std::string(in.substr(*pos, static_cast<size_t>(*n)));
      *pos += static_cast<size_t>(*n) + 2;
      return r;
    }
    case '*': {
      auto n = Int(*line);
      if (!n || *n < -1 || *n > kMaxElements) return std::nullopt;
      if (*n == -1) return r;
      r.type = ValkeyReply::Type::kArray;
      for (int64_t i = 0; i < *n; ++i) {
        auto e = Decode(in, pos, depth + 1);
        if (!e) return std::nullopt;
        r.elements.push_back(std::move(*e));
      }
      return r;
    }
    default:
      return std::nullopt;
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view in(reinterpret_cast<const char*>(data), size);
  size_t pos = 0;
  auto reply = Decode(in, &pos, 0);
  if (!reply) return 0;

  bp::Decision d;
  const std::string failure = bp::ParseAdmitReply(bp::Result<ValkeyReply>(*reply), &d);
  if (failure.empty() && d.verdict != bp::Verdict::kAdmit && d.verdict != bp::Verdict::kDefer &&
      d.verdict != bp::Verdict::kReject)
    __builtin_trap();
  (void)bp::CheckReply(bp::Result<ValkeyReply>(*reply), "fuzz");

  (void)reply->AsString();
  (void)bp::ReplyToDouble(*reply, 1.0);
  if (reply->type == ValkeyReply::Type::kArray && reply->elements.size() % 2 == 0) {
    std::map<std::string, ValkeyReply> fields;
    for (size_t i = 0; i + 1 < reply->elements.size(); i += 2) {
      fields[reply->elements[i].AsString()] = reply->elements[i + 1];
    }
    bp::GateCaps caps;
    (void)bp::CapsOfFields(fields, &caps);
    for (const auto& [name, value] : fields) {
      (void)bp::FieldNumber(fields, name);
      for (const ValkeyReply& e : value.elements) (void)bp::ReplyToDouble(e, 1.0);
    }
  }

  if (auto ranges = bp::ParseClusterSlots(*reply, "127.0.0.1"); ranges.ok()) {
    for (const bp::ClusterSlotRange& r : *ranges) {
      if (r.first < 0 || r.last < r.first || r.last > 16383 || r.port < 1 || r.port > 65535 ||
          r.host.empty())
        __builtin_trap();
    }
  }
  if (auto redirect = bp::ParseClusterRedirect(*reply)) {
    if (redirect->slot < 0 || redirect->slot > 16383) __builtin_trap();
  }
  return 0;
}
