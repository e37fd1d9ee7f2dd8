// The declared-configuration format (gate_config_json.h; bpctl export and
// import): exact round trip, strict parsing, validation of the whole
// document, and reading a file. No server needed.
#include "bp/gate_config_json.h"

#include <gtest/gtest.h>

#include <fstream>

namespace bp {
namespace {

using json = nlohmann::ordered_json;

GateConfig Sample() {
  GateConfig c;
  c.configured = true;
  c.caps = GateCaps{100.0 / 60, 12000, 0.25};  // 100 rpm: not a short decimal
  c.omega = {0.5, 0.3, 0.2};
  c.tenant_weights = {{"acme", 2}, {"beta.1", 0.1}};
  c.tuning.slack_ms = 20;
  c.tuning.lend_fraction = 0.75;
  c.tuning.grace_ms = 150;
  c.tuning.ticket_ttl_ms = 30000;
  c.tuning.adapt = true;
  c.tuning.adapt_beta = 0.5;
  c.tuning.share_rule = GateTuning::ShareRule::kFlat;  // not the default, so an import must keep it
  c.tuning.class_policy = GateTuning::ClassPolicy::kStrict;  // likewise
  return c;
}

TEST(GateConfigJson, RoundTripsExactly) {
  const json j = GateConfigToJson(Sample());
  EXPECT_EQ(
      j.dump(),
      R"({"version":1,"caps":{"requests_per_s":1.6666666666666667,"tokens_per_s":12000.0,)"
      R"("burst_s":0.25},"priority_weights":[0.5,0.3,0.2],"tenant_weights":{"acme":2.0,)"
      R"("beta.1":0.1},"tuning":{"slack_ms":20.0,"lend_fraction":0.75,"grace_ms":150.0,)"
      R"("ticket_ttl_ms":30000,"adapt":true,"adapt_beta":0.5,"adapt_recover_ms":120000.0,)"
      R"("adapt_window_ms":2000.0,"adapt_min_429":4,"share_rule":"flat","class_policy":"strict"}})");
  auto back = GateConfigFromJson(json::parse(j.dump()));
  ASSERT_TRUE(back.ok()) << back.status().ToString();
  EXPECT_EQ(GateConfigToJson(*back), j);
  EXPECT_EQ(back->caps.requests_per_s, 100.0 / 60);  // bit-exact
}

TEST(GateConfigJson, MaxCostsAreExportedOnlyWhenSet) {
  GateConfig c = Sample();
  c.caps.max_cost_tokens = 12000;  // the provider's limit per window
  const json j = GateConfigToJson(c);
  EXPECT_EQ(j.at("caps").dump(),
            R"({"requests_per_s":1.6666666666666667,"tokens_per_s":12000.0,"burst_s":0.25,)"
            R"("max_cost_tokens":12000.0})");
  auto back = GateConfigFromJson(json::parse(j.dump()));
  ASSERT_TRUE(back.ok()) << back.status().ToString();
  EXPECT_EQ(back->caps.max_cost_tokens, 12000);
  EXPECT_EQ(back->caps.max_cost_requests, 0);  // not set: the gate's default
  EXPECT_EQ(GateConfigToJson(*back), j);
}

TEST(GateConfigJson, OptionalFieldsTakeTheGateDefaults) {
  auto c = GateConfigFromJson(json::parse(R"({"version":1,"caps":{"requests_per_s":10}})"));
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  EXPECT_EQ(c->caps.tokens_per_s, 0);
  EXPECT_EQ(c->caps.burst_s, 1);
  EXPECT_TRUE(c->omega.empty());
  EXPECT_TRUE(c->tenant_weights.empty());
  EXPECT_EQ(c->tuning.slack_ms, GateTuning{}.slack_ms);
  EXPECT_EQ(c->tuning.ticket_ttl_ms, GateTuning{}.ticket_ttl_ms);
}

TEST(GateConfigJson, UnconfiguredExportsNullCapsThatImportRejects) {
  const json j = GateConfigToJson(GateConfig{});
  EXPECT_TRUE(j["caps"].is_null());
  auto c = GateConfigFromJson(j);
  ASSERT_FALSE(c.ok());
  EXPECT_EQ(c.status().message(), "caps: required (the gate needs caps)");
}

// The cases the Python and Node readers answer alike (their tests read the
// same file): one message each, to the letter.
TEST(GateConfigJson, RefusesEachConformanceCaseWithItsMessage) {
  std::ifstream in(std::string(BP_SOURCE_DIR) + "/tests/conformance/declared.json");
  ASSERT_TRUE(in) << "tests/conformance/declared.json";
  const json cases = json::parse(in).at("cases");
  ASSERT_GE(cases.size(), 30u);
  for (const json& c : cases) {
    const std::string name = c.at("name").get<std::string>();
    auto config = GateConfigFromJson(c.at("config"));
    ASSERT_FALSE(config.ok()) << name;
    EXPECT_EQ(config.status().code(), StatusCode::kInvalidArgument) << name;
    EXPECT_EQ(config.status().message(), c.at("error").get<std::string>()) << name;
  }
}

// Refusals of the C++ reader alone: the clients take a configuration
// without "version" (one written in code), a file must name it.
TEST(GateConfigJson, RefusesADocumentWithoutItsVersion) {
  auto c = GateConfigFromJson(json::parse(R"({"caps":{"requests_per_s":1}})"));
  EXPECT_EQ(c.status().message(), "version: must be 1, got nothing");
}

// Built in C++ rather than read: the same ranges, the struct's value.
TEST(GateConfigJson, CheckRangesNamesTheFieldTheRangeAndTheValue) {
  GateConfig c = Sample();
  c.tenant_weights["acme"] = -1;
  EXPECT_EQ(CheckGateConfigRanges(c).message(),
            "tenant_weights.acme: must be a number in [1e-06, 1e+06], got -1");
  c = Sample();
  c.caps.max_cost_tokens = 0.5;
  EXPECT_EQ(CheckGateConfigRanges(c).message(),
            "caps.max_cost_tokens: must be 0 (the default) or a number in [1, 1e+12], got 0.5");
  c = Sample();
  c.tuning.ticket_ttl_ms = 0;
  EXPECT_EQ(CheckGateConfigRanges(c).message(),
            "tuning.ticket_ttl_ms: must be an integer in [1, 9007199254740992], got 0");
  c = Sample();
  c.tenant_weights["a b"] = 1;
  EXPECT_EQ(CheckGateConfigRanges(c).message(),
            "tenant_weights.a b: must be a tenant name: 1-128 bytes of [A-Za-z0-9_.-]");
  EXPECT_TRUE(CheckGateConfigRanges(Sample()).ok());
}

TEST(GateConfigJson, ParseConfigTextRejectsEmptyTruncatedAndRepeatedKeys) {
  EXPECT_EQ(ParseGateConfigText(R"({"version":1,"caps":null})")->at("version"), 1);
  EXPECT_EQ(ParseGateConfigText("").status().message(),
            "empty file (expected the JSON of `bpctl export`)");
  EXPECT_EQ(ParseGateConfigText("\n \n").status().message(),
            "empty file (expected the JSON of `bpctl export`)");
  EXPECT_EQ(ParseGateConfigText(R"({"version":1,"caps":{)").status().message(),
            "not valid JSON at line 1, column 22: syntax error while parsing object key - "
            "unexpected end of input; "
            "expected string literal");
  EXPECT_EQ(ParseGateConfigText(R"({"version":1,"version":1})").status().message(),
            "duplicate key \"version\" (each field may appear once)");
  // The same key in two different objects is fine; repeated inside one is not.
  EXPECT_TRUE(ParseGateConfigText(R"({"a":{"x":1},"b":{"x":1}})").ok());
  EXPECT_EQ(ParseGateConfigText(R"({"a":{"x":1},"b":{"y":1,"y":2}})").status().message(),
            "duplicate key \"y\" (each field may appear once)");
}

TEST(GateConfigJson, ReadsAFileNamingItInEveryError) {
  const std::string dir = ::testing::TempDir();
  auto write = [&](const std::string& name, const std::string& text) {
    const std::string path = dir + "/" + name;
    std::ofstream(path) << text;
    return path;
  };
  const std::string good = write("declared.json", GateConfigToJson(Sample()).dump(2));
  auto c = ReadGateConfigFile(good);
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  EXPECT_EQ(GateConfigToJson(*c), GateConfigToJson(Sample()));
  const std::string missing = dir + "/no-such-file.json";
  EXPECT_EQ(ReadGateConfigFile(missing).status().ToString(),
            "NotFound: " + missing + ": cannot read the gate configuration file");
  const std::string null_caps = write("null-caps.json", R"({"version":1,"caps":null})");
  EXPECT_EQ(ReadGateConfigFile(null_caps).status().message(),
            null_caps + ": caps: required (the gate needs caps)");
  const std::string bad = write("bad.json", R"({"version":1,"caps":{"requests_per_s":"x"}})");
  EXPECT_EQ(ReadGateConfigFile(bad).status().message(),
            bad +
                ": caps.requests_per_s: must be a number in [1.6666666666666667e-05, "
                "16666666.666666666] (0.001 to 1e+09 rpm), got \"x\"");
}

}  // namespace
}  // namespace bp
