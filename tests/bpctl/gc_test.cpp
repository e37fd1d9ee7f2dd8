// bpctl gc: targets whose last admission (server time) is older than
// --idle-s lose every key; recently used and never-admitted targets stay.
#include <chrono>
#include <nlohmann/json.hpp>
#include <string>

#include "bp/valkey.h"
#include "bpctl/bpctl_fixture.h"

namespace bp::test {
namespace {

using bpctl::kExitBadValue;
using bpctl::kExitOk;

class BpctlGc : public BpctlSuite {
 protected:
  // bpctl on another target of the same server.
  BpctlRun On(const std::string& target, std::vector<std::string> args) const {
    std::vector<std::string> all = {"--valkey", server_->url(), "--target", target, "--create"};
    all.insert(all.end(), args.begin(), args.end());
    return BpctlRaw(all);
  }
};

int64_t NowMs() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

TEST_F(BpctlGc, DeletesOnlyTargetsIdleLongerThanTheLimit) {
  const std::string old_t = target_ + "-old", fresh = target_ + "-fresh", cfg = target_ + "-cfg";
  for (const std::string& t : {old_t, fresh, cfg}) {
    ASSERT_EQ(On(t, {"set", "cap", "--rpm", "600"}).rc, kExitOk);
  }
  // Last admission two hours ago (script clock), and one now (server clock).
  const std::string two_hours_ago = std::to_string(NowMs() - 2 * 3600 * 1000);
  ASSERT_EQ(On(old_t, {"admit", "--tenant", "a", "--now-ms", two_hours_ago}).rc, kExitOk);
  ASSERT_EQ(On(fresh, {"admit", "--tenant", "a"}).rc, kExitOk);
  const auto fresh_before = On(fresh, {"export"}).out;

  BpctlRun dry = Bpctl({"gc", "--idle-s", "3600", "--dry-run"});
  ASSERT_EQ(dry.rc, kExitOk) << dry.err;
  EXPECT_NE(dry.out.find("would delete target " + old_t + " (idle 7200 s)"), std::string::npos)
      << dry.out;
  EXPECT_EQ(dry.out.find(fresh + " "), std::string::npos) << dry.out;
  EXPECT_EQ(dry.out.find(cfg + " "), std::string::npos) << dry.out;
  EXPECT_NE(On(old_t, {"export"}).out.find("\"requests_per_s\""), std::string::npos);

  BpctlRun gc = Bpctl({"gc", "--idle-s", "3600"});
  ASSERT_EQ(gc.rc, kExitOk) << gc.err;
  EXPECT_NE(gc.out.find("deleted target " + old_t + " (idle 7200 s)"), std::string::npos) << gc.out;
  // Every key of the old target is gone; the others are as they were.
  ValkeyConnection conn(ValkeyOptions{server_->url(), 1000, 2000});
  auto keys = conn.Command({"KEYS", "bp:{" + old_t + "}*"});
  ASSERT_TRUE(keys.ok());
  EXPECT_EQ(keys->elements.size(), 0u);
  EXPECT_EQ(On(fresh, {"export"}).out, fresh_before);
  EXPECT_NE(On(cfg, {"export"}).out.find("\"requests_per_s\""), std::string::npos);

  BpctlRun bad = Bpctl({"gc", "--idle-s", "-1"});
  EXPECT_EQ(bad.rc, kExitBadValue);
  EXPECT_EQ(bad.err, "bpctl: --idle-s: must be a number in [0, 10000000000], got '-1'\n");
}

// `reset` keeps the bucket record at script time 0 (so ticket numbers are
// never reused); that is no admission, not one in 1970: gc keeps the target
// and its configuration, and `targets` says "never".
TEST_F(BpctlGc, KeepsATargetResetAndNotAdmittedToSince) {
  const std::string reset_t = target_ + "-reset";
  ASSERT_EQ(On(reset_t, {"set", "cap", "--rpm", "600"}).rc, kExitOk);
  ASSERT_EQ(On(reset_t, {"admit", "--tenant", "a"}).rc, kExitOk);  // ticket 1
  ASSERT_EQ(On(reset_t, {"reset"}).rc, kExitOk);
  const auto config_before = On(reset_t, {"export"}).out;

  BpctlRun dry = Bpctl({"gc", "--idle-s", "3600", "--dry-run"});
  ASSERT_EQ(dry.rc, kExitOk) << dry.err;
  EXPECT_EQ(dry.out.find(reset_t), std::string::npos) << dry.out;
  BpctlRun gc = Bpctl({"gc", "--idle-s", "3600"});
  ASSERT_EQ(gc.rc, kExitOk) << gc.err;
  EXPECT_EQ(gc.out.find(reset_t), std::string::npos) << gc.out;
  EXPECT_EQ(On(reset_t, {"export"}).out, config_before);

  BpctlRun list = BpctlRaw({"--valkey", server_->url(), "targets", "--json"});
  ASSERT_EQ(list.rc, kExitOk) << list.err;
  bool found = false;
  for (const auto& t : nlohmann::json::parse(list.out)) {
    if (t["target"] != reset_t) continue;
    found = true;
    EXPECT_TRUE(t["idle_s"].is_null()) << t.dump();
  }
  EXPECT_TRUE(found) << list.out;

  // The next admission is a last admission again: ticket 2, idle about 0 s.
  ASSERT_EQ(On(reset_t, {"admit", "--tenant", "a"}).out, "ADMIT ticket 2\n");
  BpctlRun after = Bpctl({"gc", "--idle-s", "3600", "--dry-run"});
  ASSERT_EQ(after.rc, kExitOk) << after.err;
  EXPECT_EQ(after.out.find(reset_t), std::string::npos) << after.out;
  BpctlRun zero = Bpctl({"gc", "--idle-s", "0", "--dry-run"});
  ASSERT_EQ(zero.rc, kExitOk) << zero.err;
  const std::string line = "would delete target " + reset_t + " (idle ";
  const size_t at = zero.out.find(line);
  ASSERT_NE(at, std::string::npos) << zero.out;
  EXPECT_LT(std::stod(zero.out.substr(at + line.size())), 60) << zero.out;  // not since 1970
}

}  // namespace
}  // namespace bp::test
