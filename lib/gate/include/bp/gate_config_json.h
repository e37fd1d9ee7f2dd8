// The JSON form of a gate target's declared configuration: what `bpctl
// export` prints, `bpctl import` reads and gate clients are given
// (GateOptions::declared_config; loadgen --gate-config). Export then import
// restores the same configuration, and exporting again gives the same text.
//
//   {"version": 1,
//    "caps": {"requests_per_s": 60, "tokens_per_s": 12000, "burst_s": 1},
//    "priority_weights": [0.5, 0.3, 0.2],
//    "tenant_weights": {"acme": 2},
//    "tuning": {"slack_ms": 50, "lend_fraction": 0.5, "grace_ms": 200,
//               "ticket_ttl_ms": 600000, "share_rule": "hier",
//               "class_policy": "fair"}}
//
// Caps are per second (rpm / 60). "caps" is null when the target has none.
// Parsing is strict: unknown fields, wrong types and invalid values are
// errors naming the field; omitted optional fields take the gate's defaults
// (tokens_per_s 0, burst_s 1, no priority or tenant weights, default tuning,
// share_rule "hier"; "flat" is the per-queue weight rule, docs/gate.md;
// class_policy "fair"; "strict" serves a class only while no higher class is
// eligibly backlogged, docs/gate.md "Strict priority").
// Also here: the check of a configuration against the ranges tools accept
// (bp/gate_ranges.h).
// Pure functions; thread-safe.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <string_view>

#include "bp/gate.h"
#include "bp/gate_admin.h"
#include "bp/gate_ranges.h"
#include "bp/status.h"

namespace bp {

// InvalidArgument naming the field, the accepted range and the value, in
// json_fields.h's shape ("tenant_weights.acme: must be a number in [1e-06,
// 1e+06], got 1e+300"; numbers by bp::FormatNumber) when a value of `config`
// is outside the ranges tools accept (bp/gate_ranges.h: caps, weights,
// classes, tuning) or a tenant name is not one (bp::ValidTenantName).
Status CheckGateConfigRanges(const GateConfig& config);

nlohmann::ordered_json GateConfigToJson(const GateConfig& config);

// The configuration in `j`, read by bp::OrderedJsonFields (json_fields.h),
// each number against the range CheckGateConfigRanges checks, then validated
// as a whole (CheckGateConfigRanges, bp::ValidateGateConfig): InvalidArgument
// on the first error, naming the field, the range and the value as written
// ("tenant_weights.acme: must be a number in [1e-06, 1e+06], got \"x\"",
// "caps.max_cost_tokens: must be 0 (the default) or a number in [1, 1e+12],
// got 0.5").
Result<GateConfig> GateConfigFromJson(const nlohmann::ordered_json& j);

// The text of a configuration file as JSON: InvalidArgument for an empty (or
// all-whitespace) text, a syntax error (truncated file; the message has the
// position) or a key repeated within one object ("duplicate key \"caps\"").
Result<nlohmann::ordered_json> ParseGateConfigText(std::string_view text);

// The configured target's configuration in the file at `path` (the two steps
// above): NotFound when it cannot be read, InvalidArgument when its content
// is bad (a null "caps" too: "caps: required (the gate needs caps)");
// each message starts with the path (bp::ReadJsonFile's shape).
Result<GateConfig> ReadGateConfigFile(const std::string& path);

}  // namespace bp
