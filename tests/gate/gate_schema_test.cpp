// The key schema's one owner is lib/gate/lua/prelude.lua. C++ keeps two
// documented mirrors of it, compared here with the scripts themselves: the
// tenant-name rule (bp::ValidTenantName) and the defaults (bp/gate_ranges.h,
// which bp::GateTuning's initializers use). State() and ReplaceConfig() are
// one atomic script call each, as MONITOR shows.
#include <algorithm>
#include <cstdio>
#include <fstream>
#include <functional>
#include <map>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "bp/gate_admin.h"
#include "bp/gate_ranges.h"
#include "bp/valkey.h"
#include "gate_fixture.h"

namespace bp::lua {
extern const std::string_view kAdmitLua;
extern const std::string_view kConfigureLua;
extern const std::string_view kStateLua;
}  // namespace bp::lua

namespace bp::test {
namespace {

class GateSchema : public GateSuite {
 protected:
  std::unique_ptr<ValkeyConnection> Admin() {
    auto c = std::make_unique<ValkeyConnection>(ValkeyOptions{server_->url(), 1000, 5000});
    EXPECT_TRUE(c->Connect().ok());
    return c;
  }
  // The commands clients sent while `op` ran, as MONITOR shows them
  // (commands run by a script are marked "lua" and left out), as sent.
  std::vector<std::string> ClientCommands(ValkeyConnection& admin,
                                          const std::function<void()>& op) {
    const std::string cli = FindValkeyCli() + " -p " + std::to_string(server_->port()) + " monitor";
    FILE* mon = popen(cli.c_str(), "r");
    EXPECT_NE(mon, nullptr);
    std::vector<std::string> out;
    if (!mon) return out;
    char line[8192];
    EXPECT_NE(fgets(line, sizeof line, mon), nullptr);  // "OK": monitoring from here
    op();
    EXPECT_TRUE(admin.Command({"ECHO", "schema-test-end"}).ok());
    while (fgets(line, sizeof line, mon)) {
      const std::string l = line;
      if (l.find("schema-test-end") != std::string::npos) break;
      if (l.find(" lua]") != std::string::npos) continue;
      const size_t q = l.find("] \"");
      if (q != std::string::npos) out.push_back(l.substr(q + 3, l.find('"', q + 3) - q - 3));
    }
    auto clients = admin.Command({"CLIENT", "LIST", "TYPE", "normal"});
    EXPECT_TRUE(clients.ok());
    std::istringstream in(clients.ok() ? clients->str : "");
    for (std::string c; std::getline(in, c);) {
      if (c.find(" flags=O ") != std::string::npos) {  // the monitor: ends the cli
        admin.Command({"CLIENT", "KILL", "ID", c.substr(3, c.find(' ') - 3)});
      }
    }
    pclose(mon);
    return out;
  }
};

// Every byte value as the second character of a name, and the length bounds:
// the C++ mirror accepts exactly the names admit.lua accepts.
TEST_F(GateSchema, TenantRuleMirrorsThePrelude) {
  auto admin = Admin();
  ValkeyConnection& conn = *admin;
  const std::string key = "bp:{schema-tenant}:state";  // unconfigured: a valid name gets
                                                       // "target not configured"
  std::vector<std::string> names = {"", "a", std::string(128, 'x'), std::string(129, 'x'),
                                    "A-Z_a.z-09"};
  for (int b = 1; b < 256; ++b) names.push_back(std::string("a") + static_cast<char>(b));
  int accepted = 0;
  for (const std::string& name : names) {
    auto r = conn.EvalScript(lua::kAdmitLua, {key},
                             {name, "1", "1", "0", "0", "reconcile", "none", "10000", "1"});
    ASSERT_TRUE(r.ok());
    ASSERT_TRUE(r->is_error()) << r->AsString();
    const bool script_accepts = r->str.find("tenant must match") == std::string::npos;
    EXPECT_EQ(script_accepts, ValidTenantName(name))
        << "name of " << name.size() << " bytes, " << r->str;
    accepted += script_accepts;
  }
  EXPECT_EQ(accepted, 3 + 62 + 3);  // a, 128 x's, A-Z_a.z-09; "a" + [A-Za-z0-9]; "a" + _.-
  // configure.lua refuses a tenant weight under a bad name, writing nothing.
  auto bad =
      conn.EvalScript(lua::kConfigureLua, {key},
                      {"update", R"({"caps":{"requests_per_s":5},"tenant_weights":{"a b":2}})"});
  ASSERT_TRUE(bad.ok());
  EXPECT_TRUE(bad->is_error());
  EXPECT_NE(bad->str.find("tenant 'a b' must match [A-Za-z0-9_.-]{1,128}"), std::string::npos)
      << bad->str;
  auto exists = conn.Command({"EXISTS", key});
  ASSERT_TRUE(exists.ok());
  EXPECT_EQ(exists->integer, 0);
}

// A target whose tuning was never set reads the prelude's defaults, which
// must equal GateTuning's initializers.
TEST_F(GateSchema, TuningDefaultsMirrorThePrelude) {
  auto gate = MakeGate();
  ASSERT_TRUE(GateAdmin(*gate).SetCaps(GateCaps{10, 100, 2}).ok());
  auto c = GateAdmin(*gate).Config();
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  const GateTuning d;
  EXPECT_EQ(c->tuning.slack_ms, d.slack_ms);
  EXPECT_EQ(c->tuning.lend_fraction, d.lend_fraction);
  EXPECT_EQ(c->tuning.grace_ms, d.grace_ms);
  EXPECT_EQ(c->tuning.ticket_ttl_ms, d.ticket_ttl_ms);
  EXPECT_EQ(c->tuning.adapt, d.adapt);
  EXPECT_EQ(c->tuning.adapt_beta, d.adapt_beta);
  EXPECT_EQ(c->tuning.adapt_recover_ms, d.adapt_recover_ms);
  EXPECT_EQ(c->tuning.adapt_window_ms, d.adapt_window_ms);
  EXPECT_EQ(c->tuning.adapt_min_429, d.adapt_min_429);
  EXPECT_EQ(c->caps.burst_s, 2);
}

// The text of lib/gate/lua/<lua_file> in the source tree ("" when absent).
std::string SourceText(const std::string& lua_file) {
  std::ifstream in(std::string(BP_SOURCE_DIR) + "/lib/gate/lua/" + lua_file);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

// admit.lua is two files (lib/gate/lua/parts.txt): the embedded text is the
// naming line, the prelude, then admit.lua and admit_decision.lua in that
// order, byte for byte (the Python and Node clients assert the same text).
TEST(GateScriptParts, AdmitIsThePreludeThenItsTwoFilesInOrder) {
  const std::string head = SourceText("admit.lua");
  const std::string tail = SourceText("admit_decision.lua");
  ASSERT_FALSE(head.empty());
  ASSERT_FALSE(tail.empty());
  EXPECT_EQ(std::string(lua::kAdmitLua), "-- admit.lua: prelude.lua, then admit.lua\n" +
                                             SourceText("prelude.lua") + head + tail);
}

// Every default of bp/gate_ranges.h equals prelude.lua's DEFAULT_*, read
// by running the prelude itself.
TEST_F(GateSchema, RangesHeaderDefaultsMirrorThePrelude) {
  std::ifstream in(std::string(BP_SOURCE_DIR) + "/lib/gate/lua/prelude.lua");
  std::stringstream text;
  text << in.rdbuf();
  ASSERT_FALSE(text.str().empty());
  // Numbers as text: a reply would truncate 0.5 and 0.7 to integers.
  text << "\nlocal d = {DEFAULT_BURST_S, DEFAULT_SLACK_MS, DEFAULT_LEND_FRACTION,"
          " DEFAULT_GRACE_MS, DEFAULT_TICKET_TTL_MS, DEFAULT_QUEUE_TTL_MS, DEFAULT_ADAPT_BETA,"
          " DEFAULT_ADAPT_RECOVER_MS, DEFAULT_ADAPT_WINDOW_MS, DEFAULT_ADAPT_MIN_429}\n"
          "for i = 1, #d do d[i] = string.format('%.17g', d[i]) end\nreturn d\n";
  auto admin = Admin();
  const std::string script = text.str();
  auto r = admin->EvalScript(script, {"bp:{schema-defaults}:state"}, {});
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  ASSERT_FALSE(r->is_error()) << r->str;
  ASSERT_EQ(r->elements.size(), 10u);
  const double mirrors[] = {kDefaultGateBurstS,
                            kDefaultGateSlackMs,
                            kDefaultGateLendFraction,
                            kDefaultGateGraceMs,
                            static_cast<double>(kDefaultGateTicketTtlMs),
                            static_cast<double>(kDefaultGateQueueTtlMs),
                            kDefaultGateAdaptBeta,
                            kDefaultGateAdaptRecoverMs,
                            kDefaultGateAdaptWindowMs,
                            static_cast<double>(kDefaultGateAdaptMin429)};
  for (size_t i = 0; i < 10; ++i) {
    EXPECT_EQ(std::stod(r->elements[i].AsString()), mirrors[i]) << "default #" << i;
  }
}

// State() is one script call (a snapshot); ReplaceConfig() is one script
// call that also drops the tenant weights and classes it does not name.
TEST_F(GateSchema, StateAndReplaceConfigAreOneCallEach) {
  auto gate = MakeGate(GateCaps{10, 0, 1}, {0.5, 0.3, 0.2});
  ASSERT_TRUE(GateAdmin(*gate).SetTenantWeight("a", 2).ok());
  ASSERT_TRUE(GateAdmin(*gate).SetTenantWeight("b", 3).ok());
  ASSERT_EQ(gate->Admit(AdmitRequest{"a", 2, {1, 0}, 0, kT0}).verdict, Verdict::kAdmit);
  ASSERT_TRUE(GateAdmin(*gate).State().ok());  // state.lua loaded: no SCRIPT LOAD below
  auto owned = Admin();
  ValkeyConnection& admin = *owned;
  Result<GateState> st = Status::Internal("not run");
  EXPECT_EQ(ClientCommands(admin, [&] { st = GateAdmin(*gate).State(); }),
            (std::vector<std::string>{"EVALSHA"}));
  ASSERT_TRUE(st.ok()) << st.status().ToString();
  ASSERT_EQ(st->queues.size(), 1u);
  EXPECT_EQ(st->queues[0].tenant, "a");
  EXPECT_EQ(st->queues[0].priority, 2);
  EXPECT_DOUBLE_EQ(st->queues[0].weight, 2 * 0.3);
  EXPECT_EQ(st->queues[0].admits, 1);
  EXPECT_EQ(st->l1_requests, 9);
  EXPECT_EQ(st->l1_at_ms, static_cast<double>(kT0));
  EXPECT_TRUE(st->has_bucket_state);
  EXPECT_EQ(st->class_requests, (std::vector<double>{0, 1, 0}));

  GateConfig c;
  c.configured = true;
  c.caps = GateCaps{20, 0, 1};
  c.omega = {0.7, 0.3};
  c.tenant_weights = {{"b", 4}};
  Status replaced = Status::Internal("not run");
  EXPECT_EQ(ClientCommands(admin, [&] { replaced = GateAdmin(*gate).ReplaceConfig(c); }),
            (std::vector<std::string>{"EVALSHA"}));
  ASSERT_TRUE(replaced.ok()) << replaced.ToString();
  auto back = GateAdmin(*gate).Config();
  ASSERT_TRUE(back.ok());
  EXPECT_EQ(back->omega, (std::vector<double>{0.7, 0.3}));
  EXPECT_EQ(back->tenant_weights, (std::map<std::string, double>{{"b", 4}}));
  EXPECT_EQ(back->caps.requests_per_s, 20);
  // Nothing of the classes and tenants it does not name is left: the state
  // hash has the fields of a target given `c` alone and the same admission.
  auto control = MakeGate();
  ASSERT_TRUE(GateAdmin(*control).ReplaceConfig(c).ok());
  ASSERT_EQ(control->Admit(AdmitRequest{"a", 2, {1, 0}, 0, kT0}).verdict, Verdict::kAdmit);
  auto fields = [&](const Gate& g) {
    auto keys =
        admin.EvalScript(lua::kStateLua, {"bp:{" + g.options().target + "}:state"}, {"keys"});
    EXPECT_TRUE(keys.ok() && keys->elements.size() > 1);
    auto r = admin.Command({"HKEYS", keys.ok() ? keys->elements[1].AsString() : ""});
    std::vector<std::string> out;
    for (const auto& f : r->elements) out.push_back(f.AsString());
    std::sort(out.begin(), out.end());
    return out;
  };
  EXPECT_EQ(fields(*gate), fields(*control));
}

// ValkeyConnection::EvalScript keeps the SHA1 of the gate's embedded scripts
// by address (static text) and of any other text by content: a buffer reused
// with other text runs the new text, a copy of an embedded script runs as
// itself, and after SCRIPT FLUSH the embedded script is loaded again.
TEST_F(GateSchema, EvalScriptRunsTheTextItWasGiven) {
  auto admin = Admin();
  ValkeyConnection& conn = *admin;
  const std::vector<std::string> key = {"bp:{schema-sha}:state"};  // unconfigured
  const std::vector<std::string> args = {"a",         "1",    "1",     "0", "0",
                                         "reconcile", "none", "10000", "1"};
  auto unconfigured = [&](std::string_view body) {
    auto r = conn.EvalScript(body, key, args);
    return r.ok() && r->is_error() && r->str.find("target not configured") != std::string::npos;
  };
  EXPECT_TRUE(unconfigured(lua::kAdmitLua));
  std::string buf = "return 'one'";
  auto one = conn.EvalScript(buf, key, {});
  buf = "return 'two'";  // same buffer, same size
  auto two = conn.EvalScript(buf, key, {});
  ASSERT_TRUE(one.ok() && two.ok());
  EXPECT_EQ(one->AsString(), "one");
  EXPECT_EQ(two->AsString(), "two");
  const std::string copy(lua::kAdmitLua);
  EXPECT_TRUE(unconfigured(copy));
  auto tagged = conn.EvalScript("do return 'first' end\n" + copy, key, args);
  ASSERT_TRUE(tagged.ok());
  EXPECT_EQ(tagged->AsString(), "first");
  ASSERT_TRUE(conn.Command({"SCRIPT", "FLUSH"}).ok());
  EXPECT_TRUE(unconfigured(lua::kAdmitLua));  // NOSCRIPT, loaded again
  EXPECT_TRUE(unconfigured(copy));
}

}  // namespace
}  // namespace bp::test
