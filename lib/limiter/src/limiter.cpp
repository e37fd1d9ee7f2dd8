// The four limiter algorithms (lib/limiter/include/bp/limiter.h). Exact integer
// arithmetic on microseconds; the token bucket counts token-microseconds.
#include "bp/limiter.h"

#include <algorithm>
#include <cmath>
#include <deque>
#include <limits>

namespace bp {
namespace {

constexpr int64_t kMaxWindowUs = 10'000'000LL * 1'000'000LL;  // 1e7 s
constexpr int64_t kMaxScaled = std::numeric_limits<int64_t>::max() / 4;

int64_t ToUs(double seconds) { return static_cast<int64_t>(std::llround(seconds * 1e6)); }

int64_t FloorDiv(int64_t a, int64_t b) {
  const int64_t q = a / b;
  return (a % b != 0 && (a < 0) != (b < 0)) ? q - 1 : q;
}

int64_t CeilDiv(int64_t a, int64_t b) { return a <= 0 ? 0 : (a + b - 1) / b; }

// `limit` per clock-aligned window of `window_us`; also the quantized limiter
// (a fixed window of quantum_us holding the quantum's share of the limit).
class FixedWindowLimiter final : public Limiter {
 public:
  FixedWindowLimiter(const LimiterOptions& o, int64_t limit, int64_t window_us)
      : Limiter(o), limit_(limit), window_us_(window_us) {}

  int64_t WaitUs(int64_t cost, int64_t now_us) override {
    Roll(now_us);
    if (used_ + cost <= limit_) return 0;
    return window_start_ + window_us_ - now_us;
  }
  void Consume(int64_t cost, int64_t now_us) override {
    Roll(now_us);
    used_ += cost;
  }
  void Refund(int64_t cost, int64_t consumed_at_us, int64_t now_us) override {
    Roll(now_us);
    if (FloorDiv(consumed_at_us, window_us_) * window_us_ != window_start_) return;
    used_ = std::max<int64_t>(0, used_ - std::max<int64_t>(0, cost));
  }
  int64_t Remaining(int64_t now_us) override {
    Roll(now_us);
    return std::max<int64_t>(0, limit_ - used_);
  }
  int64_t ResetUs(int64_t now_us) override {
    Roll(now_us);
    return used_ == 0 ? 0 : window_start_ + window_us_ - now_us;
  }
  int64_t capacity() const override { return limit_; }

 private:
  void Roll(int64_t now_us) {
    const int64_t start = FloorDiv(now_us, window_us_) * window_us_;
    if (start != window_start_) {
      window_start_ = start;
      used_ = 0;
    }
  }

  const int64_t limit_;
  const int64_t window_us_;
  int64_t window_start_ = std::numeric_limits<int64_t>::min();
  int64_t used_ = 0;
};

// A log of (time, cost); an entry counts while now < time + window.
class SlidingWindowLimiter final : public Limiter {
 public:
  SlidingWindowLimiter(const LimiterOptions& o, int64_t window_us)
      : Limiter(o), limit_(o.limit), window_us_(window_us) {}

  int64_t WaitUs(int64_t cost, int64_t now_us) override {
    Expire(now_us);
    const int64_t excess = sum_ + cost - limit_;
    if (excess <= 0) return 0;
    int64_t freed = 0;
    for (const Entry& e : log_) {  // bounded by the log's length
      freed += e.cost;
      if (freed >= excess) return e.time_us + window_us_ - now_us;
    }
    return window_us_;  // unreachable while cost <= limit
  }
  void Consume(int64_t cost, int64_t now_us) override {
    Expire(now_us);
    if (cost <= 0) return;
    if (!log_.empty() && log_.back().time_us == now_us) {
      log_.back().cost += cost;
    } else {
      log_.push_back({now_us, cost});
    }
    sum_ += cost;
  }
  void Refund(int64_t cost, int64_t consumed_at_us, int64_t now_us) override {
    Expire(now_us);
    for (auto it = log_.rbegin(); it != log_.rend() && cost > 0; ++it) {
      if (it->time_us < consumed_at_us) return;
      if (it->time_us != consumed_at_us) continue;
      const int64_t back = std::min(cost, it->cost);
      it->cost -= back;
      sum_ -= back;
      return;
    }
  }
  int64_t Remaining(int64_t now_us) override {
    Expire(now_us);
    return std::max<int64_t>(0, limit_ - sum_);
  }
  int64_t ResetUs(int64_t now_us) override {
    Expire(now_us);
    return log_.empty() ? 0 : log_.back().time_us + window_us_ - now_us;
  }
  int64_t capacity() const override { return limit_; }

 private:
  struct Entry {
    int64_t time_us;
    int64_t cost;
  };
  void Expire(int64_t now_us) {
    while (!log_.empty() && log_.front().time_us + window_us_ <= now_us) {
      sum_ -= log_.front().cost;
      log_.pop_front();
    }
  }

  const int64_t limit_;
  const int64_t window_us_;
  std::deque<Entry> log_;
  int64_t sum_ = 0;
};

// Capacity `limit`, refilled at limit/window per second. The level is kept in
// token-microseconds (tokens * window_us), refilled by `limit` per microsecond.
class TokenBucketLimiter final : public Limiter {
 public:
  TokenBucketLimiter(const LimiterOptions& o, int64_t window_us)
      : Limiter(o), limit_(o.limit), window_us_(window_us), full_(o.limit * window_us) {}

  int64_t WaitUs(int64_t cost, int64_t now_us) override {
    Refill(now_us);
    const int64_t need = cost * window_us_;
    return level_ >= need ? 0 : CeilDiv(need - level_, limit_);
  }
  void Consume(int64_t cost, int64_t now_us) override {
    Refill(now_us);
    level_ -= std::min(cost, limit_) * window_us_;  // at most one capacity of debt per call
    level_ = std::max(level_, -full_ * 2);
  }
  void Refund(int64_t cost, int64_t, int64_t now_us) override {
    Refill(now_us);
    if (cost <= 0) return;
    level_ = std::min(full_, level_ + std::min(cost, limit_) * window_us_);
  }
  int64_t Remaining(int64_t now_us) override {
    Refill(now_us);
    return level_ <= 0 ? 0 : level_ / window_us_;
  }
  int64_t ResetUs(int64_t now_us) override {
    Refill(now_us);
    return CeilDiv(full_ - level_, limit_);
  }
  int64_t capacity() const override { return limit_; }

 private:
  void Refill(int64_t now_us) {
    if (!started_) {
      started_ = true;
      last_us_ = now_us;
      level_ = full_;
      return;
    }
    const int64_t dt = now_us - last_us_;
    if (dt <= 0) return;  // a clock going backwards refills nothing
    last_us_ = now_us;
    const int64_t to_full_us = CeilDiv(full_ - level_, limit_);
    level_ = dt >= to_full_us ? full_ : level_ + dt * limit_;
  }

  const int64_t limit_;
  const int64_t window_us_;
  const int64_t full_;
  bool started_ = false;
  int64_t last_us_ = 0;
  int64_t level_ = 0;
};

}  // namespace

const char* DimensionName(Dimension d) {
  switch (d) {
    case Dimension::kRequests:
      return "requests";
    case Dimension::kTokens:
      return "tokens";
    case Dimension::kInputTokens:
      return "input_tokens";
    case Dimension::kOutputTokens:
      return "output_tokens";
  }
  return "unknown";
}

Result<Dimension> ParseDimension(const std::string& name) {
  for (int i = 0; i < kDimensionCount; ++i) {
    const auto d = static_cast<Dimension>(i);
    if (name == DimensionName(d)) return d;
  }
  return Status::InvalidArgument(
      "dimension must be requests, tokens, input_tokens or output_tokens, got \"" + name + "\"");
}

const char* LimiterAlgorithmName(LimiterAlgorithm a) {
  switch (a) {
    case LimiterAlgorithm::kFixedWindow:
      return "fixed_window";
    case LimiterAlgorithm::kSlidingWindow:
      return "sliding_window";
    case LimiterAlgorithm::kTokenBucket:
      return "token_bucket";
    case LimiterAlgorithm::kQuantized:
      return "quantized";
  }
  return "unknown";
}

Result<LimiterAlgorithm> ParseLimiterAlgorithm(const std::string& name) {
  for (auto a : {LimiterAlgorithm::kFixedWindow, LimiterAlgorithm::kSlidingWindow,
                 LimiterAlgorithm::kTokenBucket, LimiterAlgorithm::kQuantized}) {
    if (name == LimiterAlgorithmName(a)) return a;
  }
  return Status::InvalidArgument(
      "algorithm must be fixed_window, sliding_window, token_bucket or quantized, got \"" + name +
      "\"");
}

Status ValidateLimiterOptions(const LimiterOptions& o) {
  if (o.limit < 1)
    return Status::InvalidArgument("limit must be >= 1, got " + std::to_string(o.limit));
  if (!std::isfinite(o.window_s) || o.window_s <= 0 || ToUs(o.window_s) < 1 ||
      ToUs(o.window_s) > kMaxWindowUs) {
    return Status::InvalidArgument("window_s must be in [0.000001, 10000000], got " +
                                   std::to_string(o.window_s));
  }
  const int64_t window_us = ToUs(o.window_s);
  if (o.limit > kMaxScaled / window_us) {
    return Status::InvalidArgument("limit * window_s too large: " + std::to_string(o.limit) +
                                   " per " + std::to_string(o.window_s) + " s");
  }
  if (o.algorithm == LimiterAlgorithm::kQuantized) {
    const int64_t quantum_us = std::isfinite(o.quantum_s) ? ToUs(o.quantum_s) : 0;
    if (quantum_us < 1 || quantum_us > window_us) {
      return Status::InvalidArgument("quantum_s must be in (0, window_s], got " +
                                     std::to_string(o.quantum_s));
    }
    if (o.limit * quantum_us / window_us < 1) {
      return Status::InvalidArgument("quantized limit below 1 per quantum: " +
                                     std::to_string(o.limit) + " * quantum_s / window_s < 1");
    }
  }
  return Status::Ok();
}

Result<std::unique_ptr<Limiter>> MakeLimiter(const LimiterOptions& o) {
  if (Status s = ValidateLimiterOptions(o); !s.ok()) return s;
  const int64_t window_us = ToUs(o.window_s);
  std::unique_ptr<Limiter> limiter;
  switch (o.algorithm) {
    case LimiterAlgorithm::kFixedWindow:
      limiter = std::make_unique<FixedWindowLimiter>(o, o.limit, window_us);
      break;
    case LimiterAlgorithm::kSlidingWindow:
      limiter = std::make_unique<SlidingWindowLimiter>(o, window_us);
      break;
    case LimiterAlgorithm::kTokenBucket:
      limiter = std::make_unique<TokenBucketLimiter>(o, window_us);
      break;
    case LimiterAlgorithm::kQuantized: {
      const int64_t quantum_us = ToUs(o.quantum_s);
      limiter =
          std::make_unique<FixedWindowLimiter>(o, o.limit * quantum_us / window_us, quantum_us);
      break;
    }
  }
  return limiter;
}

}  // namespace bp
