// What `bpctl status` and `bpctl watch` show: a target's configuration and
// state as JSON (the model, printed by --json) and as text rendered from it.
//
// Fields (docs/bpctl.md, "Status", has the full list): caps (per second and per minute),
// priority and tenant weights, tuning, the L1 buckets (level refilled to the
// server's time, capacity, refill rate), V, the L2 classes (omega, nominal
// share and rates, admitted totals) and each active queue (weight, tag, lag
// behind V, backlogged, fair share and fair rates over the backlogged queues,
// admit/defer/lent counters). The gate has no per-queue bucket: a backlogged
// queue's fair rate (share x cap) is what refills its turn.
// Pure functions; thread-safe.
#pragma once

#include <nlohmann/json.hpp>
#include <string>

#include "bp/gate_admin.h"

namespace bp::bpctl {

// The status of `target` from one GateAdmin::State() snapshot (state.lua:
// the levels refilled to the server's time, learned rates, effective max
// costs and fair shares are the script's). GateState::server ("valkey
// 9.1.2") is the "server" field right after "target"; left out when empty.
nlohmann::ordered_json StatusJson(const std::string& target, const GateState& state);

// Adds rates since `previous` (an earlier StatusJson of the same target):
// per queue "admits_per_s", per class "admitted_requests_per_s" and
// "admitted_tokens_per_s", over the server-time interval between the two.
void AddRates(nlohmann::ordered_json& status, const nlohmann::ordered_json& previous);

// The human-readable view (tables), ending in a newline.
std::string StatusText(const nlohmann::ordered_json& status);

}  // namespace bp::bpctl
