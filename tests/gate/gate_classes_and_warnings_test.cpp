// Two rules at the edges of the gate: a priority beyond the configured classes
// is refused (it would get weight 1 and outrank P1), and fail-open warnings
// are limited per process and target, not per Gate object.
#include <spdlog/sinks/ostream_sink.h>
#include <spdlog/spdlog.h>

#include <sstream>
#include <thread>

#include "bp/gate_admin.h"
#include "gate/gate_fixture.h"

namespace bp::test {
namespace {

class GatePriorityClasses : public GateSuite {};
class GateFailOpenWarning : public GateSuite {};

AdmitRequest At(const std::string& tenant, int priority, int64_t t_ms) {
  return AdmitRequest{tenant, priority, Cost{1, 0}, 0, kT0 + t_ms};
}

TEST_F(GatePriorityClasses, PriorityAboveTheClassesIsRejected) {
  auto gate = MakeGate(GateCaps{10, 0, 1.0}, {0.5, 0.3, 0.2});
  Decision d = gate->Admit(At("a", 4, 0));
  EXPECT_EQ(d.verdict, Verdict::kReject);
  EXPECT_EQ(d.reason, "priority 4 above the configured classes 1..3");
  EXPECT_EQ(GateAdmin(*gate).State()->l1_requests, 10);            // nothing debited
  EXPECT_EQ(gate->Admit(At("a", 3, 0)).verdict, Verdict::kAdmit);  // 10 -> 9
  // Fewer classes: class 3 is now beyond them.
  ASSERT_TRUE(GateAdmin(*gate).SetPriorityWeights({0.6, 0.4}).ok());
  d = gate->Admit(At("a", 3, 0));
  EXPECT_EQ(d.verdict, Verdict::kReject);
  EXPECT_EQ(d.reason, "priority 3 above the configured classes 1..2");
  EXPECT_EQ(gate->counters().rejects, 2u);
}

TEST_F(GatePriorityClasses, WithoutPriorityWeightsEveryClassHasWeightOne) {
  auto gate = MakeGate(GateCaps{10, 0, 1.0}, {});
  EXPECT_EQ(gate->Admit(At("a", 7, 0)).verdict, Verdict::kAdmit);
}

TEST_F(GatePriorityClasses, NoPriorityAblationMapsEveryClassToOne) {
  GateOptions o;
  o.ablation = GateAblation::kNoPriority;
  auto gate = MakeGate(GateCaps{10, 0, 1.0}, {0.5, 0.5}, o);
  EXPECT_EQ(gate->Admit(At("a", 9, 0)).verdict, Verdict::kAdmit);
}

size_t Count(const std::string& text, const std::string& what) {
  size_t n = 0;
  for (size_t pos = 0; (pos = text.find(what, pos)) != std::string::npos; ++pos) ++n;
  return n;
}

TEST_F(GateFailOpenWarning, OneFailOpenWarningPerTargetAcrossGatesAndThreads) {
  std::ostringstream log;
  auto logger = std::make_shared<spdlog::logger>(
      "test", std::make_shared<spdlog::sinks::ostream_sink_mt>(log));
  auto previous = spdlog::default_logger();
  spdlog::set_default_logger(logger);
  GateOptions o;
  o.warn_interval_ms = 3'600'000;
  // Four gates on one unconfigured target (every call fails open), as a
  // worker pool with four gate threads holds them.
  auto first = MakeGate(o);
  std::vector<std::unique_ptr<Gate>> gates;
  for (int i = 0; i < 4; ++i) {
    GateOptions same = first->options();
    gates.push_back(std::make_unique<Gate>(same));
  }
  std::vector<std::thread> threads;
  for (auto& g : gates) {
    threads.emplace_back([&g] {
      for (int i = 0; i < 5; ++i) g->Admit(AdmitRequest{"a", 1, {1, 0}, 0, 0});
    });
  }
  for (auto& t : threads) t.join();
  // Another target warns on its own.
  auto other = MakeGate(o);
  EXPECT_EQ(other->Admit(AdmitRequest{"a", 1, {1, 0}, 0, 0}).verdict, Verdict::kFailOpen);
  spdlog::set_default_logger(previous);
  const std::string text = log.str();
  EXPECT_EQ(Count(text, "bp gate '" + first->options().target + "': failing open"), 1u) << text;
  EXPECT_EQ(Count(text, "bp gate '" + other->options().target + "': failing open (1 so far"), 1u)
      << text;
  uint64_t total = 0;
  for (auto& g : gates) total += g->fail_open_count();
  EXPECT_EQ(total, 20u);  // every call counted, one line printed
}

}  // namespace
}  // namespace bp::test
