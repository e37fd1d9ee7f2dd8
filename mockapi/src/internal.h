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
  std::string prompt_text;   // concatenated text of system + all message contents (full parser)
  int64_t prompt_bytes = 0;  // its length in bytes (both parsers; the estimate's input)
  int64_t max_tokens = 0;    // 0 = absent
  bool stream = false;
  bool include_usage = false;  // OpenAI stream_options.include_usage
  std::string error_param;     // on error: the offending field
};
// InvalidArgument with the provider's message when the body is malformed.
Status ParseChatCompletion(std::string_view body, ChatCall* call);
Status ParseMessages(std::string_view body, ChatCall* call);
// The fast path for both (chat_reader.cpp): true with model, max_tokens,
// stream, include_usage and prompt_bytes set exactly as the full parser sets
// them (prompt_text left empty); false, with `call` untouched, for any body it
// does not read (malformed, one the full parser rejects, or outside its
// subset: \u escapes, non-ASCII, exponents, repeated keys). Then use the
// full parser, which gives the provider's error message.
bool FastReadChat(std::string_view body, bool anthropic, ChatCall* call);

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

// Whose header family and 429/overload body an answer of `dialect` (the
// path's) uses under `profile`: kAzure -> Azure, kAnthropic -> Anthropic,
// kOpenAI and kBare -> `dialect` itself.
Dialect ReportingDialect(Dialect dialect, Profile profile);

// The rate-limit headers of `profile` for `states` (per dimension, the limiter
// with the least remaining is reported): kOpenAI the dialect's full set
// (x-ratelimit-{limit,remaining,reset}-{requests,tokens} or
// anthropic-ratelimit-*), kAzure x-ratelimit-remaining-{requests,tokens} only,
// kAnthropic anthropic-ratelimit-*-{limit,remaining,reset}, kBare none.
void AddRateLimitHeaders(Dialect dialect, Profile profile, const std::vector<LimiterState>& states,
                         int64_t now_us, HttpResponse* response);

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
// Retry headers by profile: kOpenAI and kAzure retry-after + retry-after-ms,
// kAnthropic retry-after, kBare none (and no x-mockapi-bound / x-should-retry).
void SetRateLimited(Dialect dialect, Profile profile, const Rejection& rejection,
                    HttpResponse* response);

// The overload answer (OverloadOptions): status 503 or 529, the reporting
// dialect's body (Anthropic overloaded_error, OpenAI server_error, Azure
// code), retry headers when options.retry_after_ms > 0. profile.cpp.
void SetOverloaded(Dialect dialect, Profile profile, const OverloadOptions& options,
                   uint64_t request_id, HttpResponse* response);
// Whether chat call n (0-based since `overload` was set) is overloaded
// (the formula of OverloadOptions).
bool Overloaded(const OverloadOptions& options, uint64_t seed, uint64_t n);
// "req_mock" + 16 hex digits of the request number.
std::string RequestId(uint64_t id);

}  // namespace bp::mockapi::internal
