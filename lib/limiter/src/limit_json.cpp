// The shared `limits` reader (limit_json.h), on bp::JsonFields
// (json_fields.h).
#include "bp/limit_json.h"

#include "bp/json_fields.h"

namespace bp {

using nlohmann::json;

Result<LimiterOptions> LimitFromJson(const json& j, const std::string& path, LimitFields fields) {
  JsonFields r(j, path);
  r.OnlyKeys({"dimension", "algorithm", "limit", "window_s", "quantum_s"});
  const Need need =
      fields == LimitFields::kRequireDimensionLimitWindow ? Need::kRequired : Need::kOptional;
  LimiterOptions out;
  std::string dimension = DimensionName(out.dimension);
  std::string algorithm = LimiterAlgorithmName(out.algorithm);
  r.String("dimension", &dimension, need, /*non_empty=*/true);
  r.String("algorithm", &algorithm, Need::kOptional, /*non_empty=*/true);
  r.Int("limit", 1, kMaxLimitPerWindow, &out.limit, need);
  const NumberRange seconds{kMinLimitSeconds, kMaxLimitSeconds};
  r.Number("window_s", seconds, &out.window_s, need);
  r.Number("quantum_s", seconds, &out.quantum_s);
  if (!r.ok()) return r.status();
  auto d = ParseDimension(dimension);
  if (!d.ok()) return WithPrefix(d.status(), path);  // "dimension must be ..."
  auto a = ParseLimiterAlgorithm(algorithm);
  if (!a.ok()) return WithPrefix(a.status(), path);
  out.dimension = *d;
  out.algorithm = *a;
  if (Status s = ValidateLimiterOptions(out); !s.ok()) return WithPrefix(s, path);
  return out;
}

Result<std::vector<LimiterOptions>> LimitsFromJson(const json& j, const std::string& path,
                                                   LimitFields fields) {
  if (!j.is_array()) return Status::InvalidArgument(path + ": must be an array, got " + j.dump());
  std::vector<LimiterOptions> out;
  for (size_t i = 0; i < j.size(); ++i) {
    auto o = LimitFromJson(j[i], path + "[" + std::to_string(i) + "]", fields);
    if (!o.ok()) return o.status();
    out.push_back(*o);
  }
  return out;
}

}  // namespace bp
