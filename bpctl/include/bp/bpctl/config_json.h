// The JSON form of a gate target's configuration: what `bpctl export` prints
// and `bpctl import` reads (docs/bpctl.md). Export then import restores the
// same configuration, and exporting again gives the same text.
//
//   {"version": 1,
//    "caps": {"requests_per_s": 60, "tokens_per_s": 12000, "burst_s": 1},
//    "priority_weights": [0.5, 0.3, 0.2],
//    "tenant_weights": {"acme": 2},
//    "tuning": {"slack_ms": 50, "lend_fraction": 0.5, "grace_ms": 200,
//               "ticket_ttl_ms": 600000}}
//
// Caps are per second (rpm / 60). "caps" is null when the target has none.
// Parsing is strict: unknown fields, wrong types and invalid values are
// errors naming the field; omitted optional fields take the gate's defaults
// (tokens_per_s 0, burst_s 1, no priority or tenant weights, default tuning).
// Pure functions; thread-safe.
#pragma once

#include <nlohmann/json.hpp>
#include <string_view>

#include "bp/gate_admin.h"
#include "bp/status.h"

namespace bp::bpctl {

nlohmann::ordered_json ConfigToJson(const GateConfig& config);

// The configuration in `j`, validated as a whole (bp::ValidateGateConfig):
// InvalidArgument ("tenant_weights.acme: must be a number") on any error.
// Values must also lie in bpctl's ranges (values.h CheckRanges).
Result<GateConfig> ConfigFromJson(const nlohmann::ordered_json& j);

// The text of an import file as JSON: InvalidArgument for an empty (or
// all-whitespace) text, a syntax error (truncated file; the message has the
// position) or a key repeated within one object ("duplicate key \"caps\"").
Result<nlohmann::ordered_json> ParseConfigText(std::string_view text);

}  // namespace bp::bpctl
