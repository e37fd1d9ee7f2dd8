// The gate's configuration ranges and defaults: the one C++ definition.
//
// Ranges: what tools accept before calling the gate (bpctl's flags and
// imports, declared configurations, loadgen's workload gate section and the
// caps it derives from upstream limits). The scripts take wider values
// (any positive finite number, ValidateGateConfig in gate_admin.h), but
// beyond these ranges their double arithmetic loses its meaning: a weight of
// 1e300 makes the quantum sigma / (w_t * omega_k) underflow to 0, a cap of
// 1e300 overflows the bucket refill, a burst of 1e299 s never empties. Every
// real provider limit is far inside. Checked by CheckGateConfigRanges
// (gate_config_json.h).
//
// Defaults: what a field never set means. Their owner is
// lib/gate/lua/prelude.lua (DEFAULT_*), which the scripts apply; the
// constants here mirror them for values built in C++ (bp::GateTuning,
// bp::GateCaps, the reference model's Config, loadgen's workload fields),
// compared with the prelude by GateSchema.TuningDefaultsMirrorThePrelude.
//
// Units: rates per minute (as providers state them) where the name says
// Rpm / Tpm, else as the field: seconds, ms, counts. Constants only;
// thread-safe.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

#include "bp/decimal.h"

namespace bp {

// An interval of accepted numbers (bp::NumberRange: bp::RangeText writes
// it, "[0.001, 1e+09]", "(0, 1)"; bp::InRange checks a value).
using GateRange = NumberRange;

// ---------------------------------------------------------------- ranges
// Tenant weights w_t and class weights omega_k.
inline constexpr double kMinGateWeight = 1e-6;
inline constexpr double kMaxGateWeight = 1e6;
// GateCaps::requests_per_s in [kMinGateRpm / 60, kMaxGateRpm / 60];
// tokens_per_s in [0, kMaxGateTpm / 60] (0 = no token dimension).
inline constexpr double kMinGateRpm = 1e-3;  // requests per minute
inline constexpr double kMaxGateRpm = 1e9;
inline constexpr double kMaxGateTpm = 1e12;     // tokens per minute
inline constexpr double kMinGateBurstS = 1e-3;  // bucket depth, seconds of the cap
inline constexpr double kMaxGateBurstS = 3600;
// max_cost_requests / max_cost_tokens: 0 (the default) or in [1, max]; a
// fraction would REJECT every call of one request or one token.
inline constexpr double kMaxGateCostRequests = kMaxGateRpm;
inline constexpr double kMaxGateCostTokens = kMaxGateTpm;
// Priority classes omega_1..omega_K: K in [1, kMaxGateClasses].
inline constexpr size_t kMaxGateClasses = 100;
// The adaptive rule's parameters (docs/gate.md "Adaptive caps"): a recovery
// longer than a day never recovers within a run, a window longer than an
// hour holds a decrease that long, and no provider answers a million 429s
// within one window.
inline constexpr GateRange kGateAdaptBetaRange{0, 1, true, true};          // decrease factor
inline constexpr GateRange kGateAdaptRecoverMsRange{0, 86'400'000, true};  // ms, 0 to the cap
inline constexpr GateRange kGateAdaptWindowMsRange{0, 3'600'000};          // ms
inline constexpr int64_t kMaxGateAdaptMin429 = 1'000'000;                  // 429s per window, >= 1
// tuning.ticket_ttl_ms in [1, 2^53]: the scripts hold it in a double (Lua's
// number), which counts whole milliseconds exactly only up to 2^53.
inline constexpr int64_t kMaxGateTicketTtlMs = int64_t{1} << 53;

// ---------------------------------------------------------------- defaults
// prelude.lua's DEFAULT_BURST_S: the L1 depth, seconds of cap.
inline constexpr double kDefaultGateBurstS = 1.0;
// DEFAULT_SLACK_MS, DEFAULT_LEND_FRACTION, DEFAULT_GRACE_MS,
// DEFAULT_TICKET_TTL_MS (bp::GateTuning documents each).
inline constexpr double kDefaultGateSlackMs = 50;
inline constexpr double kDefaultGateLendFraction = 0.5;
inline constexpr double kDefaultGateGraceMs = 200;
inline constexpr int64_t kDefaultGateTicketTtlMs = 600000;
// DEFAULT_QUEUE_TTL_MS: an idle queue is evicted after this.
inline constexpr int64_t kDefaultGateQueueTtlMs = 10000;
// DEFAULT_ADAPT_BETA, DEFAULT_ADAPT_RECOVER_MS, DEFAULT_ADAPT_WINDOW_MS,
// DEFAULT_ADAPT_MIN_429 (adaptive caps; off by default).
inline constexpr double kDefaultGateAdaptBeta = 0.7;
inline constexpr double kDefaultGateAdaptRecoverMs = 120000;
inline constexpr double kDefaultGateAdaptWindowMs = 2000;
inline constexpr int64_t kDefaultGateAdaptMin429 = 4;

}  // namespace bp
