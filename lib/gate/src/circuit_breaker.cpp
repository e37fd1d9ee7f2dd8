// The circuit breaker's state machine (bp/circuit_breaker.h): three states
// under one mutex, time from the injected clock.
#include "bp/circuit_breaker.h"

namespace bp {

const char* BreakerStateName(BreakerState state) {
  switch (state) {
    case BreakerState::kClosed:
      return "closed";
    case BreakerState::kOpen:
      return "open";
    case BreakerState::kHalfOpen:
      return "half-open";
  }
  return "closed";  // not reached: every enumerator is named above
}

CircuitBreaker::CircuitBreaker(int cool_off_ms, const Clock& clock)
    : cool_off_ms_(cool_off_ms > 0 ? cool_off_ms : 0), clock_(clock) {}

bool CircuitBreaker::Allow() {
  if (cool_off_ms_ == 0) return true;
  std::lock_guard lock(mu_);
  switch (state_) {
    case BreakerState::kClosed:
      return true;
    case BreakerState::kHalfOpen:
      return false;  // the probe is in flight
    case BreakerState::kOpen:
      break;
  }
  const int64_t now_us = clock_.NowUs();
  // A clock that went back (not a steady one) probes at once rather than never.
  if (now_us >= opened_us_ && now_us - opened_us_ < int64_t{cool_off_ms_} * 1000) return false;
  state_ = BreakerState::kHalfOpen;
  return true;
}

void CircuitBreaker::OnSuccess() {
  if (cool_off_ms_ == 0) return;
  std::lock_guard lock(mu_);
  state_ = BreakerState::kClosed;
}

void CircuitBreaker::OnFailure() {
  if (cool_off_ms_ == 0) return;
  std::lock_guard lock(mu_);
  if (state_ == BreakerState::kOpen) return;
  state_ = BreakerState::kOpen;
  opened_us_ = clock_.NowUs();
  ++opens_;
}

void CircuitBreaker::Abandon() {
  std::lock_guard lock(mu_);
  if (state_ == BreakerState::kHalfOpen) state_ = BreakerState::kOpen;
}

BreakerState CircuitBreaker::state() const {
  std::lock_guard lock(mu_);
  return state_;
}

uint64_t CircuitBreaker::opens() const {
  std::lock_guard lock(mu_);
  return opens_;
}

}  // namespace bp
