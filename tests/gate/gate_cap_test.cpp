// P1 under real concurrency: threads on several connections admit as fast as
// they can for a fixed span with the server's clock; admitted cost never
// exceeds C_d * span + burst in any dimension (I1: one atomic check-and-debit).
// The span is measured around all calls, so it can only overstate the bound.
#include <atomic>
#include <chrono>
#include <thread>

#include "gate/gate_fixture.h"

namespace bp::test {
namespace {

class GateCap : public GateSuite {};

TEST_F(GateCap, ManyThreadsNeverExceedTheCap) {
  const GateCaps caps{200, 4000, 1.0};
  auto first = MakeGate(caps, {0.5, 0.3, 0.2});
  GateOptions o = first->options();
  constexpr int kGates = 4, kThreadsPerGate = 2;
  std::vector<std::unique_ptr<Gate>> gates;
  for (int i = 0; i < kGates; ++i) gates.push_back(std::make_unique<Gate>(o));
  std::atomic<int64_t> requests{0}, tokens{0}, fail_opens{0}, calls{0};
  std::atomic<bool> stop{false};
  const auto start = std::chrono::steady_clock::now();
  std::vector<std::thread> threads;
  for (int g = 0; g < kGates; ++g) {
    for (int t = 0; t < kThreadsPerGate; ++t) {
      threads.emplace_back([&, g, t] {
        // Mixed costs so that both dimensions bind at times.
        const int64_t tok = (t % 2 == 0) ? 5 : 60;
        std::string tenant = "t";
        tenant += std::to_string(g * kThreadsPerGate + t);
        while (!stop.load()) {
          Decision d = gates[g]->Admit(AdmitRequest{tenant, 1 + (g % 3), {1, tok}, 0, 0});
          calls++;
          if (d.verdict == Verdict::kAdmit) {
            requests += 1;
            tokens += tok;
          } else if (d.verdict == Verdict::kFailOpen) {
            fail_opens++;
          }
        }
      });
    }
  }
  std::this_thread::sleep_for(std::chrono::seconds(2));
  stop = true;
  for (auto& th : threads) th.join();
  const double span_s =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  std::printf("  %lld calls, %lld requests, %lld tokens admitted in %.2f s\n",
              static_cast<long long>(calls.load()), static_cast<long long>(requests.load()),
              static_cast<long long>(tokens.load()), span_s);
  EXPECT_EQ(fail_opens.load(), 0);
  EXPECT_LE(requests.load(), caps.requests_per_s * span_s + caps.requests_per_s * caps.burst_s);
  EXPECT_LE(tokens.load(), caps.tokens_per_s * span_s + caps.tokens_per_s * caps.burst_s);
  EXPECT_GE(requests.load(), 200);  // it did admit: at least the cold burst's worth of calls
}

}  // namespace
}  // namespace bp::test
