// Shared by the bpctl tests: one real Valkey/Redis server per suite, a fresh
// target per test, bpctl run in-process (RunBpctl) on string streams, a gate
// on the same target to observe the effect of each command, and a raw
// snapshot of the target's keys to prove that invalid input changes nothing.
#pragma once

#include <gtest/gtest.h>

#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "bp/bpctl/bpctl.h"
#include "bp/gate.h"
#include "bp/gate_admin.h"
#include "support/valkey_server.h"

namespace bp::test {

// Epoch ms for script clocks in tests (any value > 0 works).
inline constexpr int64_t kT0 = 1'700'000'000'000;

struct BpctlRun {
  int rc = -1;
  std::string out, err;
};

class BpctlSuite : public ::testing::Test {
 protected:
  static void SetUpTestSuite();
  static void TearDownTestSuite();
  void SetUp() override;
  void TearDown() override;  // removes the files WriteFile made

  // bpctl --valkey <server> --target <target_> --create ARGS...
  BpctlRun Bpctl(const std::vector<std::string>& args, const bpctl::RunContext& context = {}) const;
  // bpctl with exactly ARGS (no --valkey / --target added).
  static BpctlRun BpctlRaw(const std::vector<std::string>& args,
                           const bpctl::RunContext& context = {});
  // `bpctl export` of the target, parsed.
  nlohmann::ordered_json Export() const;
  // Every key of the target and its content, as text (sorted).
  std::string Snapshot() const;
  // Snapshot() of target `target` with its name written as T, to compare
  // two targets' contents.
  std::string SnapshotAs(const std::string& target) const;
  // The target's key names as prelude.lua makes them (state.lua "keys"):
  // "state", "backlog", "expiry", "seen", "reservations", "ticket_prefix".
  std::map<std::string, std::string> KeyNames() const;
  // A gate on the target (2 s command timeout).
  std::unique_ptr<GateAdmin> MakeGate(GateMode mode = GateMode::kReconcile) const;
  // Writes `text` to a fresh file under the test's temp dir; returns its path.
  std::string WriteFile(const std::string& name, const std::string& text) const;

  static ValkeyServer* server_;
  std::string target_;

 private:
  static std::string SnapshotOf(const std::string& target);
  std::string TempDir() const;
};

}  // namespace bp::test
