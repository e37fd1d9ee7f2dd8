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
// Also here: the ranges tools accept for the fields gate.h does not bound
// (the adaptive tuning, the number of classes), with their checker.
// Pure functions; thread-safe.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <string_view>

#include "bp/gate.h"
#include "bp/gate_admin.h"
#include "bp/status.h"

namespace bp {

// An interval of accepted numbers; an open end refuses the bound itself.
struct GateRange {
  double min = 0;
  double max = 0;
  bool min_open = false;  // (min, ...
  bool max_open = false;  // ..., max)
};
// "[0.001, 1e+09]", "(0, 1)", "(0, 86400000]".
std::string GateRangeText(const GateRange& range);
// Whether v is finite and inside `range`.
bool InGateRange(double v, const GateRange& range);
// "60", "0.5", "1.6666666666666667": the shortest text that reads back as v.
std::string FormatGateNumber(double v);

// The adaptive rule's parameters that tools accept (bpctl `set adapt`,
// imports, declared configurations; docs/gate.md "Adaptive caps"; their defaults,
// 0.7, 120000 ms, 2000 ms and 4, are lib/gate/lua/prelude.lua's). Beyond
// these the rule is meaningless in practice: a recovery longer than a day
// never recovers within a run, a window longer than an hour holds a decrease
// that long, and no provider answers a million 429s within one window.
inline constexpr GateRange kGateAdaptBetaRange{0, 1, true, true};          // decrease factor
inline constexpr GateRange kGateAdaptRecoverMsRange{0, 86'400'000, true};  // ms, 0 to the cap
inline constexpr GateRange kGateAdaptWindowMsRange{0, 3'600'000};          // ms
inline constexpr int64_t kMaxGateAdaptMin429 = 1'000'000;                  // 429s per window, >= 1
inline constexpr size_t kMaxGateClasses = 100;  // priority classes omega_1..omega_K

// InvalidArgument naming the field ("tenant_weights.acme: must be in
// [1e-06, 1e+06], got 1e+300") when a value of `config` is outside the ranges
// tools accept (gate.h's caps and weights, the adaptive tuning above).
Status CheckGateConfigRanges(const GateConfig& config);

nlohmann::ordered_json GateConfigToJson(const GateConfig& config);

// The configuration in `j`, validated as a whole (bp::ValidateGateConfig,
// then CheckGateConfigRanges): InvalidArgument ("tenant_weights.acme: must be
// a number") on any error.
Result<GateConfig> GateConfigFromJson(const nlohmann::ordered_json& j);

// The text of a configuration file as JSON: InvalidArgument for an empty (or
// all-whitespace) text, a syntax error (truncated file; the message has the
// position) or a key repeated within one object ("duplicate key \"caps\"").
Result<nlohmann::ordered_json> ParseGateConfigText(std::string_view text);

// The configured target's configuration in the file at `path` (the two steps
// above): NotFound when it cannot be read, InvalidArgument when its content
// is bad (a null "caps" too: "caps: required"); each message starts with
// the path.
Result<GateConfig> ReadGateConfigFile(const std::string& path);

}  // namespace bp
