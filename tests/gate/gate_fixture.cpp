#include "gate/gate_fixture.h"

#include <queue>
#include <random>
#include <tuple>

#include "bp/gate_admin.h"

namespace bp::test {

ValkeyServer* GateSuite::server_ = nullptr;

void GateSuite::SetUpTestSuite() { server_ = new ValkeyServer(); }

void GateSuite::TearDownTestSuite() {
  delete server_;
  server_ = nullptr;
}

void GateSuite::SetUp() { ASSERT_TRUE(server_->running()) << server_->error(); }

std::unique_ptr<Gate> GateSuite::MakeGate(GateOptions options, bool generous_timeout) {
  const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
  options.url = server_->url();
  options.target = std::string(info->name()) + "-" + std::to_string(gates_++);
  if (generous_timeout) options.command_timeout_ms = 2000;
  auto gate = std::make_unique<Gate>(options);
  EXPECT_TRUE(gate->Ping().ok());
  EXPECT_TRUE(GateAdmin(*gate).Reset().ok());
  return gate;
}

std::unique_ptr<Gate> GateSuite::MakeGate(const GateCaps& caps, const std::vector<double>& omega,
                                          GateOptions options) {
  auto gate = MakeGate(options);
  EXPECT_TRUE(GateAdmin(*gate).SetCaps(caps).ok());
  if (!omega.empty()) {
    EXPECT_TRUE(GateAdmin(*gate).SetPriorityWeights(omega).ok());
  }
  return gate;
}

SimResult Simulate(Gate& gate, const std::vector<SimQueue>& queues, int64_t duration_ms,
                   int64_t warmup_ms, int service_min_ms, int service_max_ms, uint32_t seed,
                   int wake_jitter_ms) {
  SimResult out;
  out.admits.assign(queues.size(), 0);
  out.calls.assign(queues.size(), 0);
  std::mt19937 rng(seed);
  std::uniform_int_distribution<int> service(service_min_ms, service_max_ms);
  std::uniform_int_distribution<int> jitter(0, wake_jitter_ms);
  // (time, kind, queue, worker), kind 0 = release, 1 = admit; a min-heap.
  using Event = std::tuple<int64_t, int, size_t, int>;
  std::priority_queue<Event, std::vector<Event>, std::greater<>> events;
  std::map<std::pair<size_t, int>, std::string> tickets;
  for (size_t q = 0; q < queues.size(); ++q) {
    for (int w = 0; w < queues[q].workers; ++w) events.emplace(kT0 + w, 1, q, w);
  }
  while (!events.empty()) {
    auto [now, kind, q, w] = events.top();
    events.pop();
    if (now >= kT0 + duration_ms) break;
    const SimQueue& sq = queues[q];
    if (kind == 0) {
      gate.Release(tickets[{q, w}], Cost{sq.cost.requests, sq.actual_tokens}, now);
      events.emplace(now, 1, q, w);
      continue;
    }
    AdmitRequest req{sq.tenant, sq.priority, sq.cost, sq.max_tokens, now};
    Decision d = gate.Admit(req);
    out.calls[q]++;
    int64_t next = now + 1;
    if (d.verdict == Verdict::kAdmit) {
      if (now >= kT0 + warmup_ms) out.admits[q]++;
      next = now + service(rng);
      if (sq.actual_tokens >= 0) {
        tickets[{q, w}] = d.ticket;
        events.emplace(next, 0, q, w);
        continue;
      }
    } else if (d.verdict == Verdict::kDefer) {
      next = now + d.delta_ms + jitter(rng);
    } else {
      out.fail_opens++;
    }
    events.emplace(next, 1, q, w);
  }
  return out;
}

double AchievementJain(const std::vector<double>& observed, const std::vector<double>& ideal) {
  double sum = 0, sq = 0;
  for (size_t i = 0; i < observed.size(); ++i) {
    const double r = observed[i] / ideal[i];
    sum += r;
    sq += r * r;
  }
  return sum * sum / (static_cast<double>(observed.size()) * sq);
}

}  // namespace bp::test
