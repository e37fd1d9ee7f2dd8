// bpctl targets (every target of the database, with its configuration,
// queues and last admission) and the writing commands' refusal of a target
// that does not exist unless --create is given: a mistyped --target would
// otherwise write a configuration that no worker reads.
#include <nlohmann/json.hpp>

#include "bpctl/bpctl_fixture.h"

namespace bp::test {
namespace {

using bpctl::kExitBadValue;
using bpctl::kExitOk;

class BpctlTargets : public BpctlSuite {
 protected:
  // bpctl on `target` of the suite's server, without --create.
  BpctlRun On(const std::string& target, std::vector<std::string> args) const {
    std::vector<std::string> all = {"--valkey", server_->url(), "--target", target};
    all.insert(all.end(), args.begin(), args.end());
    return BpctlRaw(all);
  }
  // The targets of this test (named after it), from `targets --json`.
  nlohmann::json Mine() const {
    BpctlRun r = BpctlRaw({"--valkey", server_->url(), "targets", "--json"});
    EXPECT_EQ(r.rc, kExitOk) << r.err;
    nlohmann::json mine = nlohmann::json::array();
    for (const auto& t : nlohmann::json::parse(r.out)) {
      if (t["target"].get<std::string>().rfind(target_, 0) == 0) mine.push_back(t);
    }
    return mine;
  }
};

TEST_F(BpctlTargets, ListsEveryTargetWithConfigurationQueuesAndLastAdmission) {
  const std::string used = target_ + "-used", weights = target_ + "-weights";
  ASSERT_EQ(On(used, {"--create", "set", "cap", "--rpm", "600"}).rc, kExitOk);
  ASSERT_EQ(On(used, {"admit", "--tenant", "acme"}).rc, kExitOk);
  ASSERT_EQ(On(used, {"admit", "--tenant", "beta", "--priority", "2"}).rc, kExitOk);
  ASSERT_EQ(On(weights, {"--create", "set", "weight", "acme", "2"}).rc, kExitOk);
  const nlohmann::json mine = Mine();
  ASSERT_EQ(mine.size(), 2u) << mine.dump();
  // Sorted by name: "-used" < "-weights".
  EXPECT_EQ(mine[0]["target"], used);
  EXPECT_EQ(mine[0]["configured"], true);
  EXPECT_EQ(mine[0]["queues"], 2);  // (acme, P1) and (beta, P2)
  EXPECT_TRUE(mine[0]["idle_s"].is_number());
  EXPECT_GE(mine[0]["idle_s"].get<double>(), 0);
  EXPECT_LT(mine[0]["idle_s"].get<double>(), 60);
  EXPECT_EQ(mine[1]["target"], weights);
  EXPECT_EQ(mine[1]["configured"], false);  // a weight but no caps
  EXPECT_EQ(mine[1]["queues"], 0);
  EXPECT_TRUE(mine[1]["idle_s"].is_null());  // never admitted to
  // The table: a header, one row per target, the count.
  BpctlRun text = BpctlRaw({"--valkey", server_->url(), "targets"});
  ASSERT_EQ(text.rc, kExitOk) << text.err;
  EXPECT_EQ(text.out.rfind("TARGET", 0), 0u) << text.out;
  EXPECT_NE(text.out.find(weights + "  no (no caps)  0 "), std::string::npos) << text.out;
  EXPECT_NE(text.out.find(" never\n"), std::string::npos) << text.out;
  EXPECT_NE(text.out.find(" ago\n"), std::string::npos) << text.out;
}

TEST_F(BpctlTargets, AMistypedTargetIsRefusedWithTheClosestNames) {
  const std::string prod = target_ + "-prod";
  ASSERT_EQ(On(prod, {"--create", "set", "cap", "--rpm", "600"}).rc, kExitOk);
  const std::string typo = target_ + "-prdo";
  for (const std::vector<std::string>& args : std::vector<std::vector<std::string>>{
           {"set", "cap", "--rpm", "60"},
           {"set", "weight", "acme", "2"},
           {"set", "priority-weights", "0.5,0.5"},
           {"set", "adapt", "on"},
           {"import", WriteFile("c.json", R"({"version":1,"caps":{"requests_per_s":1}})")}}) {
    BpctlRun r = On(typo, args);
    EXPECT_EQ(r.rc, kExitBadValue) << args[0];
    EXPECT_NE(r.err.find("target " + typo + " does not exist in "), std::string::npos) << r.err;
    EXPECT_NE(r.err.find("closest existing: " + prod + ". Give --create"), std::string::npos)
        << r.err;
  }
  EXPECT_EQ(Mine().size(), 1u);  // nothing was written to the typo
  // Far from every name: the hint points at `bpctl targets` instead.
  BpctlRun far = On("zz-unrelated-name", {"set", "weight", "acme", "2"});
  EXPECT_EQ(far.rc, kExitBadValue);
  EXPECT_NE(far.err.find("`bpctl targets` lists the "), std::string::npos) << far.err;
  // --create, before or after the command, makes the new target.
  EXPECT_EQ(On(typo, {"set", "weight", "acme", "2", "--create"}).rc, kExitOk);
  EXPECT_EQ(On(typo, {"set", "cap", "--rpm", "60"}).rc, kExitOk);  // exists now
  EXPECT_EQ(Mine().size(), 2u);
}

}  // namespace
}  // namespace bp::test
