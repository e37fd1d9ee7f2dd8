// Shared by the gate tests: one real Valkey/Redis server per test suite, a
// gate per test on its own target, and a deterministic simulator of workers
// that drives the admit script with an explicit clock (AdmitRequest::now_ms),
// so fairness is measured on counts, never on wall time.
#pragma once

#include <gtest/gtest.h>

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "bp/gate.h"
#include "support/valkey_server.h"

namespace bp::test {

// Epoch ms at which simulated runs start (any value > 0 works).
inline constexpr int64_t kT0 = 1'700'000'000'000;

class GateSuite : public ::testing::Test {
 protected:
  static void SetUpTestSuite();
  static void TearDownTestSuite();
  void SetUp() override;

  // A gate on a fresh target named after the test. With generous_timeout the
  // command timeout is 2 s (the test box is loaded); outage tests keep theirs.
  std::unique_ptr<Gate> MakeGate(GateOptions options = {}, bool generous_timeout = true);
  std::unique_ptr<Gate> MakeGate(const GateCaps& caps, const std::vector<double>& omega,
                                 GateOptions options = {});

  static ValkeyServer* server_;
  int gates_ = 0;
};

// One simulated queue: `workers` workflow slots that call Admit back to back:
// after ADMIT the call takes a service time, after DEFER the worker sleeps
// exactly delta (a durable timer), then asks again.
struct SimQueue {
  std::string tenant;
  int priority = 1;
  int workers = 1;
  Cost cost;
  int64_t max_tokens = 0;
  int64_t actual_tokens = -1;  // >= 0: Release with this many tokens
};

struct SimResult {
  std::vector<int64_t> admits;   // per queue, inside the measured window
  std::vector<int64_t> calls;    // per queue, all Admit calls
  int64_t fail_opens = 0;
};

// Runs from kT0 for duration_ms and counts admissions in
// [kT0 + warmup_ms, kT0 + duration_ms). Service times are uniform in
// [service_min_ms, service_max_ms] from a fixed seed; a deferred worker
// wakes delta plus a uniform [0, wake_jitter_ms] late (durable-timer latency).
SimResult Simulate(Gate& gate, const std::vector<SimQueue>& queues, int64_t duration_ms,
                   int64_t warmup_ms, int service_min_ms = 50, int service_max_ms = 150,
                   uint32_t seed = 1, int wake_jitter_ms = 0);

// Jain's index of observed / ideal (SPEC section 6).
double AchievementJain(const std::vector<double>& observed, const std::vector<double>& ideal);

}  // namespace bp::test
