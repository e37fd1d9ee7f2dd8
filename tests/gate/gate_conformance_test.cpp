// The conformance cases of tests/conformance/cases.json (docs/protocol.md,
// "Conformance") through bp::Gate against a real server: the same file the
// Python and Node clients run, so the three clients answer alike. Also checks
// that bp::kGateProtocolVersion mirrors prelude.lua's PROTOCOL_VERSION.
#include <nlohmann/json.hpp>

#include <cmath>
#include <cstdlib>
#include <fstream>
#include <map>
#include <string>
#include <vector>

#include "bp/valkey.h"
#include "gate_fixture.h"

namespace bp::lua {
extern const std::string_view kAdmitLua;
extern const std::string_view kConfigureLua;
extern const std::string_view kStateLua;
}  // namespace bp::lua

namespace bp::test {
namespace {

using nlohmann::json;

json LoadCases() {
  std::ifstream in(std::string(BP_SOURCE_DIR) + "/tests/conformance/cases.json");
  EXPECT_TRUE(in.good());
  return json::parse(in);
}

// state.lua's numeric fields as cases.json names them (read through the
// protocol, as the other clients do), queues as queue:<priority>:<tenant>:<field>.
std::map<std::string, double> StateFields(ValkeyConnection& conn, const std::string& key) {
  std::map<std::string, double> out;
  auto r = conn.EvalScript(lua::kStateLua, {key}, {"state", "none"});
  EXPECT_TRUE(r.ok() && !r->is_error());
  if (!r.ok() || r->is_error()) return out;
  const auto& e = r->elements;
  for (size_t i = 0; i + 1 < e.size(); i += 2) {
    const std::string name = e[i].AsString();
    if (name == "queues") {
      for (const ValkeyReply& q : e[i + 1].elements) {
        std::map<std::string, std::string> f;
        for (size_t j = 0; j + 1 < q.elements.size(); j += 2) {
          f[q.elements[j].AsString()] = q.elements[j + 1].AsString();
        }
        const std::string p = "queue:" + f["priority"] + ":" + f["tenant"] + ":";
        for (const char* field : {"tag", "backlogged", "admits", "defers", "lent"}) {
          out[p + field] = std::stod(f[field]);
        }
      }
    } else if (e[i + 1].type != ValkeyReply::Type::kArray) {
      // Text fields (share_rule, class_policy, server) are not numbers.
      const std::string text = e[i + 1].AsString();
      char* end = nullptr;
      const double v = std::strtod(text.c_str(), &end);
      if (!text.empty() && *end == '\0') out[name] = v;
    }
  }
  return out;
}

class Conformance : public GateSuite {};

TEST_F(Conformance, ProtocolVersionMirrorsThePrelude) {
  const std::string line = "local PROTOCOL_VERSION = " + std::to_string(kGateProtocolVersion);
  EXPECT_NE(std::string(lua::kAdmitLua).find(line + " "), std::string::npos) << line;
  EXPECT_EQ(LoadCases()["protocol_version"].get<int>(), kGateProtocolVersion);
}

TEST_F(Conformance, EveryCaseOfTheFile) {
  const json file = LoadCases();
  const int64_t t0 = file["t0_ms"].get<int64_t>();
  ASSERT_GE(file["cases"].size(), 7u);
  for (const json& c : file["cases"]) {
    const std::string name = c["name"].get<std::string>();
    GateOptions options;
    options.mode = *ParseGateMode(c.value("mode", "reconcile"));
    auto gate = MakeGate(options);
    // The configuration as the protocol sends it: configure.lua "set".
    ValkeyConnection conn(ValkeyOptions{server_->url(), 2000, 2000});
    ASSERT_TRUE(conn.Connect().ok());
    std::vector<std::string> args = {"set"};
    for (const auto& [field, value] : c["config"].items()) {
      args.push_back(field);
      args.push_back(value.dump());
    }
    const std::string key = "bp:{" + gate->options().target + "}:state";
    auto configured = conn.EvalScript(lua::kConfigureLua, {key}, args);
    ASSERT_TRUE(configured.ok() && configured->integer == 1) << name;
    int i = 0;
    for (const json& step : c["steps"]) {
      const std::string where = name + " step " + std::to_string(++i);
      const int64_t now = t0 + step["at_ms"].get<int64_t>();
      const json& want = step["expect"];
      if (step.contains("admit")) {
        const json& a = step["admit"];
        AdmitRequest r;
        r.tenant = a["tenant"].get<std::string>();
        r.priority = a.value("priority", 1);
        r.cost = {a.value("requests", int64_t{1}), a.value("tokens", int64_t{0})};
        r.max_tokens = a.value("max_tokens", int64_t{0});
        r.now_ms = now;
        r.ahead_ms = a.value("ahead_ms", int64_t{0});
        const Decision d = gate->Admit(r);
        const std::string decision = want["decision"].get<std::string>();
        ASSERT_EQ(VerdictName(d.verdict), decision) << where << ": " << d.reason;
        if (decision == "ADMIT") {
          EXPECT_EQ(d.ticket, want["ticket"].get<std::string>()) << where;
          EXPECT_EQ(d.start_in_ms, want.value("start_in_ms", int64_t{0})) << where;
        }
        if (decision == "DEFER") {
          EXPECT_EQ(d.delta_ms, want["delta_ms"].get<int64_t>()) << where;
          EXPECT_EQ(d.reason, want["binding"].get<std::string>()) << where;
        }
        if (decision == "REJECT") {
          EXPECT_EQ(d.reason, want["reason"].get<std::string>()) << where;
        }
      } else {
        const json& r = step["release"];
        const Cost actual{r.value("requests", int64_t{1}), r["tokens"].get<int64_t>()};
        UpstreamReport report;
        if (r.contains("upstream")) {
          const json& u = r["upstream"];
          report.outcome = UpstreamReport::Outcome::kThrottled;
          const std::string bound = u.value("bound", "");
          report.bound = bound == "requests" ? UpstreamReport::Bound::kRequests
                         : bound == "tokens" ? UpstreamReport::Bound::kTokens
                                             : UpstreamReport::Bound::kUnknown;
          report.retry_after_ms = u.value("retry_after_ms", -1.0);
          report.remaining_requests = u.value("remaining_requests", int64_t{-1});
          report.reset_requests_ms = u.value("reset_requests_ms", -1.0);
          report.remaining_tokens = u.value("remaining_tokens", int64_t{-1});
          report.reset_tokens_ms = u.value("reset_tokens_ms", -1.0);
        } else if (r.contains("rate_limits")) {  // a served call's headers
          const json& h = r["rate_limits"];
          report.remaining_requests = h.value("remaining_requests", int64_t{-1});
          report.reset_requests_ms = h.value("reset_requests_ms", -1.0);
          report.remaining_tokens = h.value("remaining_tokens", int64_t{-1});
          report.reset_tokens_ms = h.value("reset_tokens_ms", -1.0);
        }
        // Whether the script applied it is not part of Gate::Release's
        // answer; the state below shows it.
        EXPECT_TRUE(gate->Release(r["ticket"].get<std::string>(), actual, report, now).ok()) << where;
      }
      if (!step.contains("state")) continue;
      const auto got = StateFields(conn, key);
      for (const auto& [field, value] : step["state"].items()) {
        ASSERT_TRUE(got.count(field)) << where << ": no state field " << field;
        EXPECT_NEAR(got.at(field), value.get<double>(), 1e-9) << where << ": " << field;
      }
    }
  }
}

}  // namespace
}  // namespace bp::test
