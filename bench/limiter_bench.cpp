// Google Benchmark: the cost of one LimiterSet::Acquire (the per-call work
// mockapi does under its scope mutex), admitted and rejected, on the system
// clock, from one and two threads sharing the set.
#include <benchmark/benchmark.h>

#include "bp/limiter.h"

namespace bp {
namespace {

std::unique_ptr<LimiterSet> MakeSet(LimiterAlgorithm algorithm, int64_t requests, int64_t tokens) {
  LimiterOptions r, t;
  r.algorithm = t.algorithm = algorithm;
  r.window_s = t.window_s = 1.0;
  r.dimension = Dimension::kRequests;
  r.limit = requests;
  t.dimension = Dimension::kTokens;
  t.limit = tokens;
  return LimiterSet::Create({r, t}, SystemClock::Instance()).value();
}

void Acquire(benchmark::State& state, LimiterAlgorithm algorithm, int64_t requests) {
  static std::unique_ptr<LimiterSet> set;
  if (state.thread_index() == 0) set = MakeSet(algorithm, requests, int64_t{1} << 40);
  const DimensionCosts cost = {1, 120, 100, 20};
  for (auto _ : state) benchmark::DoNotOptimize(set->Acquire(cost, nullptr));
}

// Limits far above the offered rate: every call admitted.
void BM_AdmitFixedWindow(benchmark::State& s) {
  Acquire(s, LimiterAlgorithm::kFixedWindow, int64_t{1} << 40);
}
void BM_AdmitTokenBucket(benchmark::State& s) {
  Acquire(s, LimiterAlgorithm::kTokenBucket, int64_t{1} << 40);
}
// 60 per second: nearly every call rejected (the 429 path).
void BM_RejectFixedWindow(benchmark::State& s) { Acquire(s, LimiterAlgorithm::kFixedWindow, 60); }

BENCHMARK(BM_AdmitFixedWindow)->Threads(1)->Threads(2);
BENCHMARK(BM_AdmitTokenBucket)->Threads(1)->Threads(2);
BENCHMARK(BM_RejectFixedWindow)->Threads(1)->Threads(2);

}  // namespace
}  // namespace bp

BENCHMARK_MAIN();
