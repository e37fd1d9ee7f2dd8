// The shared `limits` reader (limit_json.h). No exceptions: every value is
// type-checked before it is read.
#include "bp/limit_json.h"

#include <cmath>
#include <cstdint>
#include <initializer_list>
#include <sstream>

namespace bp {
namespace {

using nlohmann::json;

std::string Fmt(double x) {
  std::ostringstream o;
  o << x;
  return o.str();
}

}  // namespace

Result<LimiterOptions> LimitFromJson(const json& j, const std::string& path, LimitFields fields) {
  if (!j.is_object()) return Status::InvalidArgument(path + " must be an object");
  if (fields == LimitFields::kRequireDimensionLimitWindow) {
    for (const char* key : {"dimension", "limit", "window_s"}) {
      if (!j.contains(key)) {
        return Status::InvalidArgument(path + "." + key + " missing (required)");
      }
    }
  }
  LimiterOptions out;
  std::string names[2] = {DimensionName(out.dimension), LimiterAlgorithmName(out.algorithm)};
  int i = 0;
  for (const char* key : {"dimension", "algorithm"}) {
    std::string* s = &names[i++];
    if (!j.contains(key)) continue;
    const json& v = j[key];
    if (!v.is_string() || v.get_ref<const std::string&>().empty()) {
      return Status::InvalidArgument(path + "." + key + " must be a non-empty string, got " +
                                     v.dump());
    }
    *s = v.get<std::string>();
  }
  if (j.contains("limit")) {
    const json& v = j["limit"];
    if (!v.is_number_integer() || v.get<int64_t>() < 1 || v.get<int64_t>() > kMaxLimitPerWindow) {
      return Status::InvalidArgument(path + ".limit must be an integer in [1, " +
                                     std::to_string(kMaxLimitPerWindow) + "], got " + v.dump());
    }
    out.limit = v.get<int64_t>();
  }
  for (auto [key, dst] : {std::pair{"window_s", &out.window_s}, {"quantum_s", &out.quantum_s}}) {
    if (!j.contains(key)) continue;
    const json& v = j[key];
    if (!v.is_number() || !std::isfinite(v.get<double>()) || v.get<double>() < kMinLimitSeconds ||
        v.get<double>() > kMaxLimitSeconds) {
      return Status::InvalidArgument(path + "." + key + " must be a number in [" +
                                     Fmt(kMinLimitSeconds) + ", " + Fmt(kMaxLimitSeconds) +
                                     "], got " + v.dump());
    }
    *dst = v.get<double>();
  }
  for (const auto& item : j.items()) {
    const std::string& k = item.key();
    if (k != "dimension" && k != "algorithm" && k != "limit" && k != "window_s" &&
        k != "quantum_s") {
      return Status::InvalidArgument("unknown field " + path + "." + k);
    }
  }
  auto d = ParseDimension(names[0]);
  if (!d.ok()) return Status::InvalidArgument(path + ": " + d.status().message());
  auto a = ParseLimiterAlgorithm(names[1]);
  if (!a.ok()) return Status::InvalidArgument(path + ": " + a.status().message());
  out.dimension = *d;
  out.algorithm = *a;
  if (Status s = ValidateLimiterOptions(out); !s.ok()) {
    return Status::InvalidArgument(path + ": " + s.message());
  }
  return out;
}

Result<std::vector<LimiterOptions>> LimitsFromJson(const json& j, const std::string& path,
                                                   LimitFields fields) {
  if (!j.is_array()) return Status::InvalidArgument(path + " must be an array");
  std::vector<LimiterOptions> out;
  for (size_t i = 0; i < j.size(); ++i) {
    auto o = LimitFromJson(j[i], path + "[" + std::to_string(i) + "]", fields);
    if (!o.ok()) return o.status();
    out.push_back(*o);
  }
  return out;
}

}  // namespace bp
