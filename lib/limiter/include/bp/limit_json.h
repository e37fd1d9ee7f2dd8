// The one reader of a `limits` list in JSON, shared by mockapi's config
// (PUT /admin/config, --config files) and loadgen's workload and scenario
// files, so a limit one accepts the other accepts, and a limit one refuses the
// other refuses with the same reason.
//
// Shape of one entry (docs/mockapi-config.md):
//   {"dimension": "requests"|"tokens"|"input_tokens"|"output_tokens",
//    "algorithm": "fixed_window"|"sliding_window"|"token_bucket"|"quantized",
//    "limit": integer in [1, 2^50]        (count per window_s),
//    "window_s": number in [1e-6, 1e7]    (seconds),
//    "quantum_s": number in [1e-6, 1e7]   (seconds; quantized only matters)}
// Absent fields take LimiterOptions' defaults, unless `require` asks for them;
// then ValidateLimiterOptions (limiter.h) checks the combination.
//
// Errors: InvalidArgument in bp::JsonFields' shape (json_fields.h), the
// message starting with the entry's path, e.g. "limits[0].limit: must be an
// integer in [1, 1125899906842624], got 0.5", "limits[0].foo: unknown
// field" or "limits[0]: quantum_s must be in (0, window_s], got 5.000000".
// Thread-safety: pure functions.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "bp/limiter.h"
#include "bp/status.h"

namespace bp {

// Which fields must be present. mockapi fills absent ones from defaults
// (a PUT may change one field); loadgen derives its caps from the file and so
// requires the dimension, the limit and the window to be written out.
enum class LimitFields { kDefaults, kRequireDimensionLimitWindow };

// The ranges above, one definition for every reader of a limit (this JSON
// reader and mockapi's `--limit DIM:ALGO:LIMIT:WINDOW_S[:QUANTUM_S]` flag).
inline constexpr int64_t kMaxLimitPerWindow = int64_t{1} << 50;  // "limit", a count
inline constexpr double kMinLimitSeconds = 1e-6;  // "window_s" and "quantum_s", seconds
inline constexpr double kMaxLimitSeconds = 1e7;

// One entry; `path` names it in errors ("limits[0]").
Result<LimiterOptions> LimitFromJson(const nlohmann::json& j, const std::string& path,
                                     LimitFields fields = LimitFields::kDefaults);

// A whole list; `path` names it ("limits"), entries are "path[i]".
// "PATH: must be an array, got V" when it is not one; an empty array is valid.
Result<std::vector<LimiterOptions>> LimitsFromJson(const nlohmann::json& j, const std::string& path,
                                                   LimitFields fields = LimitFields::kDefaults);

}  // namespace bp
