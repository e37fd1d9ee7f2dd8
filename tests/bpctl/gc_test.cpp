// bpctl gc: targets whose last admission (server time) is older than
// --idle-s lose every key; recently used and never-admitted targets stay.
#include <chrono>

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

}  // namespace
}  // namespace bp::test
