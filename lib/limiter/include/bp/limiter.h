// Limiter primitives: the rate limits a provider enforces, one per dimension,
// and a LimiterSet that checks several of them atomically.
//
// Four algorithms, as in docs/providers.md ("The mock upstream used by the
// paper's authors") and SPEC section 3:
//   fixed window    `limit` per `window_s`, windows aligned to the wall clock
//                   (window k covers [k*W, (k+1)*W) microseconds since epoch);
//   sliding window  `limit` per any interval of length `window_s` (a log of
//                   admitted costs; an entry stops counting window_s after it);
//   token bucket    capacity `limit`, refilled continuously at limit/window_s
//                   per second, starts full (Anthropic's documented model);
//   quantized       `limit` per `window_s` enforced as floor(limit*quantum_s/
//                   window_s) per clock-aligned `quantum_s` window (Azure: 600
//                   RPM as 10 per second; OpenAI: 60 000 TPM as 1 000 per s).
//
// All arithmetic is exact integer arithmetic on microseconds: the token bucket
// keeps its level in token-microseconds (tokens * window_us), so waits are
// exact to the microsecond and retry-after exact to the millisecond (ceil).
//
// Units: costs and limits are counts (requests or tokens); times are
// microseconds since the Unix epoch from an injected bp::Clock.
// Thread-safety: a Limiter is not thread-safe; a LimiterSet is (one mutex).
#pragma once

#include <array>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "bp/clock.h"
#include "bp/status.h"

namespace bp {

// What a limit counts. Requests cost 1 each; the token dimensions cost what
// the caller computes (prompt + completion, input only, output only).
enum class Dimension { kRequests = 0, kTokens, kInputTokens, kOutputTokens };
inline constexpr int kDimensionCount = 4;
// "requests", "tokens", "input_tokens", "output_tokens".
const char* DimensionName(Dimension d);
Result<Dimension> ParseDimension(const std::string& name);

enum class LimiterAlgorithm { kFixedWindow, kSlidingWindow, kTokenBucket, kQuantized };
// "fixed_window", "sliding_window", "token_bucket", "quantized".
const char* LimiterAlgorithmName(LimiterAlgorithm a);
Result<LimiterAlgorithm> ParseLimiterAlgorithm(const std::string& name);

struct LimiterOptions {
  Dimension dimension = Dimension::kRequests;
  LimiterAlgorithm algorithm = LimiterAlgorithm::kFixedWindow;
  int64_t limit = 60;      // count per window_s; >= 1
  double window_s = 60.0;  // > 0; resolution 1 us
  double quantum_s = 1.0;  // quantized only: 0 < quantum_s <= window_s
};

// InvalidArgument with a message naming the field when a value is out of
// range (limit < 1, window not positive or above 1e7 s, limit*window_us
// overflowing, quantum yielding less than 1 per quantum).
Status ValidateLimiterOptions(const LimiterOptions& options);

// One limit. Not thread-safe: LimiterSet serializes access.
class Limiter {
 public:
  virtual ~Limiter() = default;

  // 0 if `cost` fits at now_us, else the microseconds until it fits
  // (assuming nothing else is consumed meanwhile). Requires cost <= capacity().
  virtual int64_t WaitUs(int64_t cost, int64_t now_us) = 0;
  // Debits `cost`, even past the limit (count_rejected charges).
  virtual void Consume(int64_t cost, int64_t now_us) = 0;
  // Gives back up to `cost` of what Consume took at `consumed_at_us`, where
  // it still counts at now_us: a fixed window (and a quantum) only while its
  // window is the current one, a sliding window from the entry of that time
  // while it has not expired, a token bucket up to full. What no longer
  // counts is not given back (a stream cut short: the tokens never generated).
  virtual void Refund(int64_t cost, int64_t consumed_at_us, int64_t now_us) = 0;
  // What could still be consumed now (>= 0): the x-ratelimit-remaining value.
  virtual int64_t Remaining(int64_t now_us) = 0;
  // Microseconds until the limit is fully restored (x-ratelimit-reset, OpenAI:
  // "time until the rate limit resets to its initial state"); 0 if it is.
  virtual int64_t ResetUs(int64_t now_us) = 0;
  // The largest single cost that can ever fit; above it, a call never fits.
  virtual int64_t capacity() const = 0;

  const LimiterOptions& options() const { return options_; }

 protected:
  explicit Limiter(const LimiterOptions& options) : options_(options) {}
  LimiterOptions options_;
};

// Builds the limiter `options` describe; the error of ValidateLimiterOptions.
Result<std::unique_ptr<Limiter>> MakeLimiter(const LimiterOptions& options);

// Cost of one call per dimension, indexed by Dimension.
using DimensionCosts = std::array<int64_t, kDimensionCount>;

// Header values of one limiter at the moment of a decision.
struct LimiterState {
  Dimension dimension = Dimension::kRequests;
  int64_t limit = 0;      // configured limit per window_s
  int64_t capacity = 0;   // largest single cost (quantized: the per-quantum share)
  int64_t remaining = 0;  // after this call's consumption
  int64_t reset_us = 0;   // until fully restored
  double window_s = 0;
};

struct LimiterDecision {
  bool admitted = false;
  bool never_fits = false;           // some cost > that limiter's capacity
  int binding = -1;                  // index of the limiter that bound; -1 if admitted
  int64_t retry_after_us = 0;        // exact wait until every limiter admits the call
  int64_t used = 0;                  // binding limiter: capacity - remaining before the call
  std::vector<LimiterState> states;  // one per limiter, in configuration order
};

// Several limits checked and consumed as one: peek all, then consume all or
// none. Thread-safe (one mutex; the lock is held for O(limiters) work, plus
// expiry of old sliding-window entries).
class LimiterSet {
 public:
  // Validates every option; the first error, prefixed "limits[i]: ".
  static Result<std::unique_ptr<LimiterSet>> Create(const std::vector<LimiterOptions>& options,
                                                    const Clock& clock);

  // Admits `cost` if every limiter admits it, consuming it from all of them.
  // Otherwise consumes nothing, except `rejected_charge` when non-null
  // (count_rejected: providers count throttled calls against the RPM limit).
  // The binding limiter is the rejecting one with the longest wait (the call
  // fits once it does, since capacity only grows while nothing is consumed);
  // a call above some capacity never fits and binds there with retry 0.
  LimiterDecision Acquire(const DimensionCosts& cost, const DimensionCosts* rejected_charge);

  // Limiter::Refund of `cost` (per dimension) consumed at `consumed_at_us`,
  // from every limiter of its dimension.
  void Refund(const DimensionCosts& cost, int64_t consumed_at_us);

  // States without consuming (for /admin and /stats).
  std::vector<LimiterState> Peek();

  size_t size() const { return limiters_.size(); }
  const LimiterOptions& options(int i) const { return limiters_[i]->options(); }

 private:
  LimiterSet(std::vector<std::unique_ptr<Limiter>> limiters, const Clock& clock);
  void FillStates(int64_t now_us, std::vector<LimiterState>* states);

  std::vector<std::unique_ptr<Limiter>> limiters_;
  const Clock& clock_;
  std::mutex mu_;
};

// ceil(us / 1000): the retry-after-ms a client should wait.
inline int64_t CeilMs(int64_t us) { return us <= 0 ? 0 : (us + 999) / 1000; }

}  // namespace bp
