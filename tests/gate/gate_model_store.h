// The differential test's view of the store: a target's whole script state
// read from a real server into a bp::gate_model::State, and the comparison of
// two states field by field. The key names and record layouts decoded here
// are lib/gate/lua/prelude.lua's (this is a reader for the test, which must
// see every field the scripts keep, including those state.lua does not
// report: the eq. (1) sums, promised wake-ups, the L1 hold, the sorted sets).
#pragma once

#include <string>

#include "bp/gate_model.h"
#include "bp/status.h"
#include "bp/valkey.h"

namespace bp::test {

// Reads target `target`'s state hash and sorted sets. Tickets are not read
// (the test compares each ticket's text when it is issued).
Result<gate_model::State> ReadStoreState(ValkeyConnection& conn, const std::string& target);

// The stored text of ticket `ticket`, or "" when absent.
std::string ReadTicket(ValkeyConnection& conn, const std::string& target,
                       const std::string& ticket);

// "" when `model` and `store` agree on every field (doubles compared
// exactly), else the first difference, named ("queue 1:t3 F: model 0.25,
// store 0.2500001").
std::string CompareStates(const gate_model::State& model, const gate_model::State& store);

}  // namespace bp::test
