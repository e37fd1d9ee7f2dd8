// LimiterSet: several limits checked and consumed atomically (peek all, then
// consume all or none), as the paper's mock upstream does.
#include <utility>

#include "bp/limiter.h"

namespace bp {

Result<std::unique_ptr<LimiterSet>> LimiterSet::Create(const std::vector<LimiterOptions>& options,
                                                       const Clock& clock) {
  std::vector<std::unique_ptr<Limiter>> limiters;
  limiters.reserve(options.size());
  for (size_t i = 0; i < options.size(); ++i) {
    auto limiter = MakeLimiter(options[i]);
    if (!limiter.ok()) {
      return Status::InvalidArgument("limits[" + std::to_string(i) +
                                     "]: " + limiter.status().message());
    }
    limiters.push_back(std::move(*limiter));
  }
  return std::unique_ptr<LimiterSet>(new LimiterSet(std::move(limiters), clock));
}

LimiterSet::LimiterSet(std::vector<std::unique_ptr<Limiter>> limiters, const Clock& clock)
    : limiters_(std::move(limiters)), clock_(clock) {}

LimiterDecision LimiterSet::Acquire(const DimensionCosts& cost,
                                    const DimensionCosts* rejected_charge) {
  LimiterDecision d;
  std::lock_guard<std::mutex> lock(mu_);
  const int64_t now_us = clock_.NowUs();
  const int n = static_cast<int>(limiters_.size());
  auto cost_of = [&](int i, const DimensionCosts& c) {
    return c[static_cast<int>(limiters_[i]->options().dimension)];
  };
  // Guard: a cost above some capacity can never fit (provider "Request too large").
  for (int i = 0; i < n && d.binding < 0; ++i) {
    if (cost_of(i, cost) > limiters_[i]->capacity()) {
      d.never_fits = true;
      d.binding = i;
    }
  }
  // Peek all: the binding limiter is the one with the longest wait.
  for (int i = 0; i < n && !d.never_fits; ++i) {
    const int64_t wait_us = limiters_[i]->WaitUs(cost_of(i, cost), now_us);
    if (wait_us > d.retry_after_us) {
      d.retry_after_us = wait_us;
      d.binding = i;
    }
  }
  d.admitted = d.binding < 0;
  if (!d.admitted) {
    Limiter& b = *limiters_[d.binding];
    d.used = b.capacity() - b.Remaining(now_us);
  }
  // Then consume all, or only the rejected charge.
  const DimensionCosts* charge = d.admitted ? &cost : rejected_charge;
  if (charge != nullptr) {
    for (int i = 0; i < n; ++i) {
      const int64_t c = cost_of(i, *charge);
      if (c > 0) limiters_[i]->Consume(c, now_us);
    }
  }
  FillStates(now_us, &d.states);
  return d;
}

void LimiterSet::Refund(const DimensionCosts& cost, int64_t consumed_at_us) {
  std::lock_guard<std::mutex> lock(mu_);
  const int64_t now_us = clock_.NowUs();
  for (auto& l : limiters_) {
    const int64_t c = cost[static_cast<int>(l->options().dimension)];
    if (c > 0) l->Refund(c, consumed_at_us, now_us);
  }
}

std::vector<LimiterState> LimiterSet::Peek() {
  std::vector<LimiterState> states;
  std::lock_guard<std::mutex> lock(mu_);
  FillStates(clock_.NowUs(), &states);
  return states;
}

void LimiterSet::FillStates(int64_t now_us, std::vector<LimiterState>* states) {
  states->resize(limiters_.size());
  for (size_t i = 0; i < limiters_.size(); ++i) {
    Limiter& l = *limiters_[i];
    LimiterState& s = (*states)[i];
    s.dimension = l.options().dimension;
    s.limit = l.options().limit;
    s.capacity = l.capacity();
    s.window_s = l.options().window_s;
    s.remaining = l.Remaining(now_us);
    s.reset_us = l.ResetUs(now_us);
  }
}

}  // namespace bp
