// What a worker learns from an upstream answer that is not a 200, for the
// providers' profiles (docs/provider-profiles.md): a wait stated only in the
// error message (a bare gateway's 429), and bp's handling of 429 / 503 / 529
// answers when a retry header is there or missing. Pure functions, no state,
// thread-safe.
#pragma once

#include <optional>
#include <string_view>

#include "bp/loadgen/engine.h"

namespace bp::loadgen {

// The wait a provider states in an error message, in milliseconds of the
// server's clock: "try again in 750ms" / "in 19.75s" / "in 6m0s" / "in 1h2m3.5s"
// (OpenAI's Go durations, as mockapi's OpenAI and Anthropic bodies say it) and
// "retry after 6 seconds" / "after 1 second" (Azure). Case-insensitive; the
// first such phrase wins; nullopt when there is none or it does not parse.
std::optional<double> ParseMessageWaitMs(std::string_view message);

// bp's handling of an upstream answer other than a 200 (bp_configuration.h):
//   x-should-retry: false            -> kFail (the call can never pass, e.g.
//                                       "Request too large");
//   429, 503, 529 (throttled or       -> kDefer on a durable timer (slot freed)
//   overloaded)                          by, in order: the retry header
//                                       (retry-after-ms, else retry-after),
//                                       the wait stated in the message, else
//                                       the activity retry policy's backoff
//                                       ActivityRetryDelayMs(earlier + 1):
//                                       1 s, 2 s, 4 s, ... 100 s (paper), where
//                                       `earlier_throttles` counts this
//                                       activity's earlier such deferrals;
//   anything else (0, 400, 500, ...) -> kRetryLater (the engine's activity
//                                       retry policy).
struct BpAnswerAction {
  enum Kind { kDefer, kRetryLater, kFail } kind = kRetryLater;
  enum Source { kNone, kHeader, kMessage, kBackoff } source = kNone;
  double wait_paper_ms = 0;  // kDefer
};
BpAnswerAction BpActionForAnswer(const CallResult& answer, int earlier_throttles);

}  // namespace bp::loadgen
