// Internal to bp::mockapi: request parsing, response bodies and the provider
// dialects' headers and error shapes (docs/providers.md). No Beast here.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "bp/limiter.h"
#include "bp/mockapi/config.h"
#include "bp/mockapi/service.h"
#include "bp/status.h"

namespace bp::mockapi::internal {

// Go's time.Duration.String() at millisecond resolution: "0s", "12ms", "1s",
// "1.5s", "6m0s", "4m12.172s", "1h0m0s" (OpenAI x-ratelimit-reset-*).
std::string GoDuration(int64_t ms);
// RFC 3339 UTC with milliseconds when non-zero: "2026-11-30T20:31:00.250Z"
// (Anthropic anthropic-ratelimit-*-reset).
std::string Rfc3339(int64_t unix_us);
// Appends `s` as a quoted JSON string.
void AppendJsonString(std::string* out, std::string_view s);

// One chat call, parsed from either dialect.
struct ChatCall {
  bool anthropic = false;
  std::string model;
  std::string prompt_text;  // concatenated text of system + all message contents
  int64_t max_tokens = 0;   // 0 = absent
  bool stream = false;
  bool include_usage = false;  // OpenAI stream_options.include_usage
  std::string error_param;     // on error: the offending field
};
// InvalidArgument with the provider's message when the body is malformed.
Status ParseChatCompletion(std::string_view body, ChatCall* call);
Status ParseMessages(std::string_view body, ChatCall* call);

struct Usage {
  int64_t prompt_tokens = 0;
  int64_t completion_tokens = 0;
  bool truncated = false;  // clamped to max_tokens: finish_reason "length" / "max_tokens"
};
// Fills body and content type: chat.completion, its SSE stream, or an
// Anthropic message / its event stream, per call.anthropic and call.stream.
void SetCompletionBody(const ChatCall& call, const Usage& usage, uint64_t id, int64_t now_us,
                       HttpResponse* response);

enum class ErrorKind { kInvalidRequest, kNotFound, kMethodNotAllowed, kTooLarge, kInternal };
// A provider-shaped error body for `dialect` with `status`.
void SetError(Dialect dialect, int status, ErrorKind kind, std::string_view message,
              std::string_view param, uint64_t request_id, HttpResponse* response);

// x-ratelimit-* (OpenAI, Azure) or anthropic-ratelimit-* headers for `states`;
// per dimension, the limiter with the least remaining is reported.
void AddRateLimitHeaders(Dialect dialect, const std::vector<LimiterState>& states, int64_t now_us,
                         HttpResponse* response);

// The 429 for a rejected call: retry headers, x-mockapi-bound, and the body
// naming the bound dimension ("Rate limit reached ..." or "Request too large ...").
struct Rejection {
  const LimiterDecision* decision = nullptr;
  const LimiterOptions* binding = nullptr;
  int64_t requested = 0;  // the call's cost in the binding dimension
  std::string_view model;
  std::string_view organization;
  uint64_t request_id = 0;
};
void SetRateLimited(Dialect dialect, const Rejection& rejection, HttpResponse* response);

}  // namespace bp::mockapi::internal
