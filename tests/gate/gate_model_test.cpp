// The named cases (gate_model_cases.cpp) on the reference model, no server:
// each call's decision, then the case's exact checks of the state.
#include "bp/gate_model.h"

#include <gtest/gtest.h>

#include <cctype>
#include <functional>
#include <ostream>
#include <string>
#include <vector>

#include "gate/gate_model_cases.h"

namespace bp::gate_model {
namespace {

class GateModelCase : public ::testing::TestWithParam<Case> {};

TEST_P(GateModelCase, DecidesAsTheRuleSays) {
  const Case& c = GetParam();
  Model m;
  m.Configure(c.config);
  for (size_t i = 0; i < c.calls.size(); ++i) {
    const Call& call = c.calls[i];
    SCOPED_TRACE("call " + std::to_string(i) + " at t0" + (call.at_ms < 0 ? "" : "+") +
                 std::to_string(call.at_ms) + " ms");
    if (call.release) {
      EXPECT_EQ(m.Release(ReleaseOf(call)), 1);
      continue;
    }
    AdmitOutput out = m.Admit(AdmitOf(call, c.mode));
    ASSERT_EQ(static_cast<int>(out.verdict), static_cast<int>(call.want)) << out.reason;
    if (call.want == Verdict::kAdmit) {
      EXPECT_EQ(out.ticket, call.text);
    }
    if (call.want == Verdict::kDefer) {
      EXPECT_EQ(out.delta_ms, call.delta_ms);
      EXPECT_EQ(out.binding, call.text);
    }
    if (call.want == Verdict::kReject) {
      EXPECT_EQ(out.reason, call.text);
    }
  }
  c.check(m);
}

INSTANTIATE_TEST_SUITE_P(Table, GateModelCase, ::testing::ValuesIn(Cases()), [](const auto& param) {
  std::string n;
  for (char ch : param.param.name) n += std::isalnum(static_cast<unsigned char>(ch)) ? ch : '_';
  return n;
});

}  // namespace
}  // namespace bp::gate_model
