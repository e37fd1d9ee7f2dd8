// bpctl's command line: help for every command, and the exit code for each
// kind of failure (2 usage, 3 bad value, 4 server, 5 file), with the state
// of the target unchanged by any failure.
#include <cstdlib>
#include <sstream>

#include "bpctl/bpctl_fixture.h"

namespace bp::test {
namespace {

using bpctl::kExitBadValue;
using bpctl::kExitFile;
using bpctl::kExitOk;
using bpctl::kExitServer;
using bpctl::kExitUsage;

class BpctlCli : public BpctlSuite {};

// Every command, as its words.
const std::vector<std::vector<std::string>>& Commands() {
  static const std::vector<std::vector<std::string>> all = {
      {"status"},        {"watch"},           {"set", "cap"},   {"set", "priority-weights"},
      {"set", "weight"}, {"unset", "weight"}, {"set", "adapt"}, {"reset"},
      {"export"},        {"import"},          {"gc"},           {"admit"},
      {"targets"}};
  return all;
}

TEST_F(BpctlCli, HelpForEveryCommandWithExamples) {
  BpctlRun top = BpctlRaw({"--help"});
  EXPECT_EQ(top.rc, kExitOk);
  EXPECT_NE(top.out.find("Exit codes: 0 ok;"), std::string::npos);
  for (const std::vector<std::string>& cmd : Commands()) {
    std::string name = cmd[0] + (cmd.size() > 1 ? " " + cmd[1] : "");
    EXPECT_NE(top.out.find("  " + name + " "), std::string::npos) << name;
    for (const char* flag : {"--help", "-h"}) {
      std::vector<std::string> args = cmd;
      args.push_back(flag);
      BpctlRun r = BpctlRaw(args);
      EXPECT_EQ(r.rc, kExitOk) << name << " " << r.err;
      EXPECT_NE(r.out.find("Usage: bpctl [--valkey URL] [--target T] " + name), std::string::npos)
          << r.out;
      EXPECT_NE(r.out.find("Examples:\n  bpctl "), std::string::npos) << name;
      EXPECT_NE(r.out.find("Exit codes:"), std::string::npos) << name;
    }
  }
  EXPECT_EQ(BpctlRaw({"set", "--help"}).rc, kExitOk);
}

TEST_F(BpctlCli, BadUsageIsExit2) {
  const std::string before = Snapshot();
  for (const std::vector<std::string>& args : std::vector<std::vector<std::string>>{
           {},
           {"frobnicate"},
           {"set"},
           {"set", "colour", "x"},
           {"--rmp", "5", "status"},
           {"set", "cap", "--rmp", "3600"},
           {"set", "cap"},
           {"set", "cap", "--rpm"},
           {"set", "weight", "acme"},
           {"set", "weight", "acme", "2", "3"},
           {"set", "priority-weights"},
           {"unset", "weight"},
           {"status", "extra"},
           {"reset", "--buckets", "--all"},
           {"import"},
           {"admit", "--priority", "1"},
           // A bad --mode is a usage error (it was exit 3), and so is a flag
           // whose value is missing because the next word is a flag (it was
           // taken as the value: exit 3, and --dry-run silently dropped).
           {"admit", "--tenant", "acme", "--mode", "eager"},
           {"admit", "--tenant", "acme", "--mode", "--dry-run"},
           {"admit", "--tenant", "--dry-run"},
           {"set", "cap", "--rpm", "--tpm", "60"},
           {"set", "adapt", "on", "--beta", "--min-429", "2"},
           // Given before the command (by Bpctl) and again after it.
           {"status", "--target", "other"},
           {"status", "--valkey", "redis://127.0.0.1:1"},
       }) {
    BpctlRun r = Bpctl(args);
    std::string line;
    for (const auto& a : args) line += a + " ";
    EXPECT_EQ(r.rc, kExitUsage) << line << r.err;
    EXPECT_EQ(r.err.rfind("bpctl: ", 0), 0u) << line << r.err;
    EXPECT_TRUE(r.out.empty()) << line;
  }
  EXPECT_EQ(Snapshot(), before);
}

TEST_F(BpctlCli, FlagValueThatIsAFlagOrABadModeIsUsage) {
  ASSERT_EQ(Bpctl({"set", "cap", "--rpm", "3600"}).rc, kExitOk);
  const std::string before = Snapshot();
  BpctlRun r = Bpctl({"admit", "--tenant", "acme", "--mode", "--dry-run"});
  EXPECT_EQ(r.rc, kExitUsage);
  EXPECT_EQ(r.err,
            "bpctl: option '--mode' needs a value, got the flag '--dry-run' (write "
            "--mode=VALUE for a value that starts with --)\nRun 'bpctl admit --help' for usage.\n");
  r = Bpctl({"admit", "--tenant", "acme", "--mode", "eager", "--dry-run"});
  EXPECT_EQ(r.rc, kExitUsage);
  EXPECT_EQ(r.err, "bpctl: --mode: must be estimate, reconcile or reservation, got 'eager'\n");
  // Global flags likewise: "--json" is not a target name here.
  r = BpctlRaw({"--valkey", server_->url(), "--target", "--json", "status"});
  EXPECT_EQ(r.rc, kExitUsage);
  EXPECT_EQ(r.err.rfind("bpctl: option '--target' needs a value, got the flag '--json'", 0), 0u)
      << r.err;
  // A value may start with "-": a negative number is still a bad value (3).
  EXPECT_EQ(Bpctl({"set", "cap", "--rpm", "-60"}).rc, kExitBadValue);
  EXPECT_EQ(Snapshot(), before);
  // Every mode word is still taken, in both spellings.
  for (const char* mode : {"--mode=estimate", "--mode=reservation"}) {
    EXPECT_EQ(Bpctl({"admit", "--tenant", "acme", mode, "--dry-run"}).rc, kExitOk) << mode;
  }
  EXPECT_EQ(Bpctl({"admit", "--tenant", "acme", "--mode", "reconcile", "--dry-run"}).rc, kExitOk);
}

// Each command's usage line lists every flag of its Options (admit's left
// out --mode and --json), except the connection flags, --help and --now-ms
// (tests only).
TEST_F(BpctlCli, UsageLineListsEveryFlag) {
  for (const std::vector<std::string>& cmd : Commands()) {
    std::vector<std::string> args = cmd;
    args.push_back("--help");
    const std::string help = BpctlRaw(args).out;
    const size_t usage_at = help.find("Usage: ");
    ASSERT_NE(usage_at, std::string::npos) << cmd[0];
    const std::string usage = help.substr(usage_at, help.find("\n\n", usage_at) - usage_at);
    const size_t options_at = help.find("Options:\n");
    ASSERT_NE(options_at, std::string::npos) << cmd[0];
    std::istringstream options(help.substr(options_at));
    int flags = 0;
    for (std::string line; std::getline(options, line);) {
      if (line.rfind("  --", 0) != 0) continue;
      const std::string flag = line.substr(2, line.find_first_of(" =", 2) - 2);
      if (flag == "--valkey" || flag == "--target" || flag == "--create" || flag == "--help" ||
          flag == "--now-ms") {
        continue;
      }
      ++flags;
      const bool listed = usage.find(flag + " ") != std::string::npos ||
                          usage.find(flag + "]") != std::string::npos;
      EXPECT_TRUE(listed) << cmd[0] << (cmd.size() > 1 ? " " + cmd[1] : "") << ": " << flag
                          << " not in\n"
                          << usage;
    }
    if (cmd[0] == "admit") {
      EXPECT_EQ(flags, 8);  // --tenant ... --json
    }
  }
}

TEST_F(BpctlCli, BadValuesAreExit3AndChangeNothing) {
  ASSERT_EQ(Bpctl({"set", "cap", "--rpm", "3600", "--tpm", "720000"}).rc, kExitOk);
  ASSERT_EQ(Bpctl({"set", "priority-weights", "0.5,0.3,0.2"}).rc, kExitOk);
  ASSERT_EQ(Bpctl({"set", "weight", "acme", "2"}).rc, kExitOk);
  ASSERT_EQ(Bpctl({"admit", "--tenant", "acme", "--tokens", "100"}).rc, kExitOk);
  const std::string before = Snapshot();
  const auto exported = Export();
  std::string many_classes = "1";  // 101 classes, one more than kMaxGateClasses
  for (int k = 0; k < 100; ++k) many_classes += ",1";
  const std::vector<std::pair<std::vector<std::string>, std::string>> cases = {
      // Every refused number names the flag's documented range.
      {{"set", "cap", "--rpm", "0"}, "--rpm: must be a number in [0.001, 1000000000], got '0'"},
      {{"set", "cap", "--rpm", "-60"}, "--rpm: must be a number in [0.001, 1000000000], got '-60'"},
      {{"set", "cap", "--rpm=-60"}, "--rpm: must be a number in [0.001, 1000000000], got '-60'"},
      {{"set", "cap", "--rpm", "nan"}, "--rpm: must be a number in [0.001, 1000000000], got 'nan'"},
      {{"set", "cap", "--rpm", "inf"}, "--rpm: must be a number in [0.001, 1000000000], got 'inf'"},
      {{"set", "cap", "--rpm", "60x"}, "--rpm: must be a number in [0.001, 1000000000], got '60x'"},
      {{"set", "cap", "--rpm", "60", "--tpm", "-1"},
       "--tpm: must be a number in [0, 1000000000000]"},
      {{"set", "cap", "--rpm", "60", "--burst-s", "0"},
       "--burst-s: must be a number in [0.001, 3600], got '0'"},
      {{"set", "priority-weights", "0.5,0,0.2"},
       "priority weight omega_2: must be a number in [0.000001, 1000000], got '0'"},
      {{"set", "priority-weights", "0.5,,0.2"},
       "priority weight omega_2: must be a number in [0.000001, 1000000], got ''"},
      // A weight outside the range, or not a finite number, is refused with
      // the range (inf and nan named only "positive finite").
      {{"set", "weight", "acme", "-1"},
       "weight W: must be a number in [0.000001, 1000000], got '-1'"},
      {{"set", "weight", "acme", "inf"},
       "weight W: must be a number in [0.000001, 1000000], got 'inf'"},
      {{"set", "weight", "acme", "NaN"},
       "weight W: must be a number in [0.000001, 1000000], got 'NaN'"},
      {{"set", "weight", "acme", "nan"},
       "weight W: must be a number in [0.000001, 1000000], got 'nan'"},
      {{"set", "weight", "acme", "-inf"},
       "weight W: must be a number in [0.000001, 1000000], got '-inf'"},
      {{"set", "weight", "acme", "0"},
       "weight W: must be a number in [0.000001, 1000000], got '0'"},
      {{"set", "weight", "acme", "1e300"},
       "weight W: must be a number in [0.000001, 1000000], got '1e300'"},
      {{"set", "weight", "acme", "1e400"},
       "weight W: must be a number in [0.000001, 1000000], got '1e400'"},
      {{"set", "weight", "acme", "1000001"},
       "weight W: must be a number in [0.000001, 1000000], got '1000001'"},
      {{"set", "weight", "acme", "1e-300"},
       "weight W: must be a number in [0.000001, 1000000], got '1e-300'"},
      {{"set", "cap", "--rpm", "1e300"},
       "--rpm: must be a number in [0.001, 1000000000], got '1e300'"},
      {{"set", "cap", "--tpm", "1e13"},
       "--tpm: must be a number in [0, 1000000000000], got '1e13'"},
      {{"set", "cap", "--burst-s", "1e6"},
       "--burst-s: must be a number in [0.001, 3600], got '1e6'"},
      {{"set", "priority-weights", "1e300,1"},
       "priority weight omega_1: must be a number in [0.000001, 1000000], got '1e300'"},
      {{"set", "weight", "a b", "2"}, "TENANT: must be 1-128 bytes of [A-Za-z0-9_.-]"},
      {{"set", "weight", "a:b", "2"}, "TENANT: must be 1-128 bytes of [A-Za-z0-9_.-]"},
      {{"set", "weight", std::string(129, 'x'), "2"}, "TENANT: must be 1-128 bytes"},
      {{"unset", "weight", "nobody"}, "unset weight: tenant nobody has no weight set"},
      {{"unset", "weight", "a*"}, "TENANT: must be 1-128 bytes"},
      {{"watch", "--interval", "0"}, "--interval: must be a number in [0.05, 86400], got '0'"},
      // Beyond 9.2e9 s the conversion to a duration overflowed: thousands of
      // frames per second instead of one.
      {{"watch", "--interval", "1e10"},
       "--interval: must be a number in [0.05, 86400], got '1e10'"},
      {{"watch", "--interval", "9.3e9"},
       "--interval: must be a number in [0.05, 86400], got '9.3e9'"},
      {{"watch", "--interval", "1e13"},
       "--interval: must be a number in [0.05, 86400], got '1e13'"},
      {{"watch", "--interval", "1e300"},
       "--interval: must be a number in [0.05, 86400], got '1e300'"},
      {{"watch", "--interval", "86401"},
       "--interval: must be a number in [0.05, 86400], got '86401'"},
      {{"watch", "--interval", "0.01"},
       "--interval: must be a number in [0.05, 86400], got '0.01'"},
      // A fraction would REJECT every call (tokens was accepted).
      {{"set", "cap", "--rpm", "60", "--max-cost-tokens", "0.5"},
       "--max-cost-tokens: must be 0 (the default) or a number in [1, 1000000000000], got '0.5'\n"},
      {{"set", "cap", "--rpm", "60", "--max-cost-requests", "0.25"},
       "--max-cost-requests: must be 0 (the default) or a number in [1, 1000000000], got '0.25'\n"},
      {{"set", "cap", "--rpm", "60", "--max-cost-requests", "2e9"},
       "--max-cost-requests: must be 0 (the default) or a number in [1, 1000000000], got '2e9'\n"},
      {{"set", "priority-weights", many_classes},
       "priority weights: at most 100 classes, got 101\n"},
      {{"watch", "--count", "-1"}, "--count: must be an integer in [0, "},
      {{"admit", "--tenant", "acme", "--priority", "0"}, "--priority: must be an integer in [1, "},
      // Was clamped to 1000000 and admitted (a queue at priority 1000000).
      {{"admit", "--tenant", "acme", "--priority", "99999999999"},
       "--priority: must be an integer in [1, 1000000], got '99999999999'"},
      {{"admit", "--tenant", "acme", "--tokens", "-5"}, "--tokens: must be an integer in [0, "},
      {{"admit", "--tenant", "acme", "--tokens", "1.5"}, "--tokens: must be an integer in [0, "},
      {{"admit", "--tenant", "", "--dry-run"}, "--tenant: must be 1-128 bytes"},
  };
  for (const auto& [args, message] : cases) {
    BpctlRun r = Bpctl(args);
    EXPECT_EQ(r.rc, kExitBadValue) << args[0] << " " << args[1] << ": " << r.err;
    EXPECT_NE(r.err.find("bpctl: " + message), std::string::npos) << r.err;
  }
  BpctlRun target = BpctlRaw({"--valkey", server_->url(), "--target", "a}b", "status"});
  EXPECT_EQ(target.rc, kExitBadValue);
  EXPECT_EQ(target.err, "bpctl: --target: must be 1-128 bytes of [A-Za-z0-9_.-], got 'a}b'\n");
  BpctlRun url = BpctlRaw({"--valkey", "http://x", "--target", target_, "status"});
  EXPECT_EQ(url.rc, kExitBadValue);
  EXPECT_EQ(url.err.rfind("bpctl: --valkey: ", 0), 0u) << url.err;
  EXPECT_EQ(Snapshot(), before);
  EXPECT_EQ(Export(), exported);
}

TEST_F(BpctlCli, UnreachableServerIsExit4) {
  const std::string closed = "redis://127.0.0.1:" + std::to_string(FreeLoopbackPort());
  const std::string file = WriteFile("ok.json", R"({"version":1,"caps":{"requests_per_s":1}})");
  for (const std::vector<std::string>& args : std::vector<std::vector<std::string>>{
           {"status"},
           {"status", "--json"},
           {"watch", "--count", "1"},
           {"export"},
           {"set", "cap", "--rpm", "60"},
           {"set", "priority-weights", "1,2"},
           {"set", "weight", "a", "2"},
           {"unset", "weight", "a"},
           {"reset"},
           {"reset", "--all"},
           {"import", file},
           {"admit", "--tenant", "a"},
           {"admit", "--tenant", "a", "--dry-run"},
       }) {
    std::vector<std::string> all = {"--valkey", closed};
    all.insert(all.end(), args.begin(), args.end());
    BpctlRun r = BpctlRaw(all);
    EXPECT_EQ(r.rc, kExitServer) << args[0] << ": " << r.err;
    EXPECT_NE(r.err.find("bpctl: cannot reach Valkey at " + closed), std::string::npos) << r.err;
  }
}

// A db the server does not have: exit 4, saying the server refused the
// SELECT (was "cannot reach Valkey").
TEST_F(BpctlCli, RefusedDbIsExit4SayingSo) {
  const std::string url = server_->url() + "/99";
  BpctlRun r = BpctlRaw({"--valkey", url, "--target", target_, "status"});
  EXPECT_EQ(r.rc, kExitServer);
  EXPECT_EQ(r.err, "bpctl: Valkey at " + url +
                       " refused the connection: valkey: the server refused SELECT 99 (the db 99 "
                       "of the URL): ERR DB index is out of range\n");
}

TEST_F(BpctlCli, UnconfiguredTargetAdmitIsExit4) {
  BpctlRun r = Bpctl({"admit", "--tenant", "acme"});
  EXPECT_EQ(r.rc, kExitServer);
  EXPECT_NE(r.err.find("target not configured"), std::string::npos) << r.err;
}

TEST_F(BpctlCli, ValkeyUrlFromTheEnvironment) {
  ASSERT_EQ(Bpctl({"set", "cap", "--rpm", "600"}).rc, kExitOk);
  const char* old = std::getenv("BP_VALKEY_URL");
  const std::string saved = old ? old : "";
  ::setenv("BP_VALKEY_URL", server_->url().c_str(), 1);
  BpctlRun ok = BpctlRaw({"--target", target_, "status", "--json"});
  ::setenv("BP_VALKEY_URL", ("redis://127.0.0.1:" + std::to_string(FreeLoopbackPort())).c_str(), 1);
  BpctlRun down = BpctlRaw({"--target", target_, "status"});
  BpctlRun flag_wins = BpctlRaw({"--valkey", server_->url(), "--target", target_, "status"});
  ::setenv("BP_VALKEY_URL", "http://127.0.0.1:6379", 1);
  BpctlRun bad = BpctlRaw({"--target", target_, "status"});
  BpctlRun bad_flag_wins = BpctlRaw({"--target", target_, "status", "--valkey", server_->url()});
  if (old) {
    ::setenv("BP_VALKEY_URL", saved.c_str(), 1);
  } else {
    ::unsetenv("BP_VALKEY_URL");
  }
  ASSERT_EQ(ok.rc, kExitOk) << ok.err;
  EXPECT_EQ(nlohmann::json::parse(ok.out)["caps"]["requests_per_s"], 10.0);
  EXPECT_EQ(down.rc, kExitServer);
  EXPECT_NE(down.err.find(" (from BP_VALKEY_URL): "), std::string::npos) << down.err;
  EXPECT_EQ(flag_wins.rc, kExitOk) << flag_wins.err;
  EXPECT_EQ(bad.rc, kExitBadValue);
  EXPECT_EQ(bad.err.rfind("bpctl: BP_VALKEY_URL: ", 0), 0u) << bad.err;
  EXPECT_EQ(bad_flag_wins.rc, kExitOk) << bad_flag_wins.err;
}

TEST_F(BpctlCli, ImportFileErrors) {
  ASSERT_EQ(Bpctl({"set", "cap", "--rpm", "600"}).rc, kExitOk);
  const std::string before = Snapshot();
  BpctlRun missing = Bpctl({"import", "/nonexistent/bpctl.json"});
  EXPECT_EQ(missing.rc, kExitFile);
  EXPECT_NE(missing.err.find("/nonexistent/bpctl.json: cannot read"), std::string::npos);
  const std::string file = WriteFile("x.json", "{}");
  const std::string dir = file.substr(0, file.rfind('/'));
  EXPECT_EQ(Bpctl({"import", dir}).rc, kExitFile);
  BpctlRun syntax = Bpctl({"import", WriteFile("bad.json", R"({"version":1,)")});
  EXPECT_EQ(syntax.rc, kExitBadValue);
  EXPECT_NE(syntax.err.find("bad.json: not valid JSON at line 1, column "), std::string::npos)
      << syntax.err;
  // Empty, blank, truncated, repeated keys, out-of-range values: exit 3 with a
  // message naming the problem, nothing written.
  const std::vector<std::pair<std::string, std::string>> bad_files = {
      {"", "empty file (expected the JSON of `bpctl export`)"},
      {" \n\t\n", "empty file (expected the JSON of `bpctl export`)"},
      {R"({"version":1,"caps":{"requests_per_s":)", "not valid JSON at line 1, column 39: "},
      {R"({"version":1,"caps":{"requests_per_s":1},"caps":null})",
       "duplicate key \"caps\" (each field may appear once)"},
      {R"({"version":1,"caps":{"requests_per_s":1},"tenant_weights":{"a":1,"a":2}})",
       "duplicate key \"a\" (each field may appear once)"},
      {R"({"version":1,"caps":{"requests_per_s":1},"tenant_weights":{"a":1e300}})",
       "tenant_weights.a: must be a number in [1e-06, 1e+06], got 1e+300"},
      {R"({"version":1,"caps":{"requests_per_s":1},"tenant_weights":{"a":-2}})",
       "tenant_weights.a: must be a number in [1e-06, 1e+06], got -2"},
      {R"({"version":1,"caps":{"requests_per_s":1e300}})",
       "caps.requests_per_s: must be a number in [1.6666666666666667e-05, 16666666.666666666] "
       "(0.001 to 1e+09 rpm), got 1e+300"},
      {R"({"version":1,"caps":{"requests_per_s":NaN}})", "not valid JSON at line 1, column 39: "},
      // The ranges of `set cap --max-cost-*` (import took 1e300).
      {R"({"version":1,"caps":{"requests_per_s":1,"max_cost_requests":1e300}})",
       "caps.max_cost_requests: must be 0 (the default) or a number in [1, 1e+09], got 1e+300"},
      {R"({"version":1,"caps":{"requests_per_s":1,"max_cost_tokens":2e12}})",
       "caps.max_cost_tokens: must be 0 (the default) or a number in [1, 1e+12], got "
       "2000000000000.0"},
      {R"({"version":1,"caps":{"requests_per_s":1,"max_cost_tokens":0.5}})",
       "caps.max_cost_tokens: must be 0 (the default) or a number in [1, 1e+12], got 0.5"},
      {R"({"version":1,"caps":{"requests_per_s":1,"max_cost_requests":0.25}})",
       "caps.max_cost_requests: must be 0 (the default) or a number in [1, 1e+09], got 0.25"},
  };
  for (size_t i = 0; i < bad_files.size(); ++i) {
    const std::string name = "bad" + std::to_string(i) + ".json";
    BpctlRun r = Bpctl({"import", WriteFile(name, bad_files[i].first)});
    EXPECT_EQ(r.rc, kExitBadValue) << bad_files[i].first << ": " << r.err;
    EXPECT_NE(r.err.find(name + ": " + bad_files[i].second), std::string::npos) << r.err;
  }
  // A bad value late in the file: nothing of the file is written.
  BpctlRun late = Bpctl({"import", WriteFile("late.json", R"({"version":1,
      "caps":{"requests_per_s":99},"priority_weights":[0.9,0.1],
      "tenant_weights":{"a":2,"b":0}})")});
  EXPECT_EQ(late.rc, kExitBadValue);
  EXPECT_NE(late.err.find("late.json: tenant_weights.b: must be a number in [1e-06, 1e+06], got 0"),
            std::string::npos)
      << late.err;
  EXPECT_EQ(Snapshot(), before);
}

}  // namespace
}  // namespace bp::test
