// Gate cost per admission versus the number of active queues, next to a
// trivial EVALSHA script on the same server in the same run, so the ratio
// holds whatever the machine's load (docs/benchmarks.md).
//
//   build/bench/gate_bench --benchmark_repetitions=5
//       --benchmark_enable_random_interleaving=true --benchmark_report_aggregates_only=true
//   (one command line)
//
// Starts its own server (tests/support: setup's Valkey 9, or BP_SERVER=redis)
// on a free loopback port. Two
// trivial scripts (bench/noop.lua, one HINCRBY) give the round-trip floor:
//   BM_TrivialEvalsha            EVALSHA with one key and no arguments
//   BM_TrivialEvalshaAdmitArgs   the same script sent exactly what an admission
//                                sends (the state key and admit.lua's 9
//                                arguments), so the two differ only in the
//                                script's own work
// For each N in {10, 1000, 10000}, BM_Admit registers N queues, all
// backlogged and active (deferred once under a tiny cap), then raises the cap
// so calls are admitted (cap:0), or to 2 000 requests/s so that most calls are
// deferred (cap:2000, the mix of an overloaded target), and times Admit
// round-robin over the N queues (classes 1-3) from one client. As a worker releases every admitted
// call, the bench deletes the issued tickets every 1 000 admissions with the clock stopped (a
// release with the actual cost equal to the estimate changes nothing else;
// without it the keyspace grew by every ticket of the run). Random
// interleaving runs the repetitions of all five in a shuffled order, so each
// sees the same mix of machine states. BM_AdmitCountersPaired times admit.lua
// with its running totals (prelude.lua's COUNTERS) on and off, paired call by
// call on two servers, at 1 000 queues: their cost in one run
// (--benchmark_filter=BM_AdmitCountersPaired). Counters:
//   items_per_second      admissions (or trivial calls) per second, one client
//   server_us_per_call    INFO commandstats usec_per_call of EVALSHA (mean)
//   server_us_p50/p99     per-call server time of EVALSHA, percentiles of INFO
//                         latencystats (Redis 7's per-command histogram)
//   client real time      per iteration (Google Benchmark's Time column)
// Admissions/s against the number of shards: bench/gate_shards_bench.cpp.
#include <benchmark/benchmark.h>

#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "bp/gate.h"
#include "bp/gate_admin.h"
#include "bp/valkey.h"
#include "support/valkey_server.h"

namespace bp::lua {
extern const std::string_view kNoopLua;
extern const std::string_view kAdmitLua;  // lib/gate's embedded prelude.lua + admit.lua
extern const std::string_view kStateLua;
}  // namespace bp::lua

namespace {

bp::test::ValkeyServer* g_server = nullptr;

bp::ValkeyOptions AdminOptions() { return bp::ValkeyOptions{g_server->url(), 1000, 5000}; }

// The key a ticket is stored under is this prefix and the ticket: the name
// comes from state.lua's "keys" mode (prelude.lua owns every key name), so
// the benchmark's releases (deleting the tickets) follow the schema. "" when
// the script fails.
std::string TicketPrefix(bp::ValkeyConnection& conn, const std::string& target) {
  auto r = conn.EvalScript(bp::lua::kStateLua, {"bp:{" + target + "}:state"}, {"keys"},
                           bp::ValkeyConnection::ScriptText::kStatic);
  if (!r.ok() || r->type != bp::ValkeyReply::Type::kArray) return "";
  for (size_t i = 0; i + 1 < r->elements.size(); i += 2) {
    if (r->elements[i].AsString() == "ticket_prefix") return r->elements[i + 1].AsString();
  }
  return "";
}

// EVALSHA usec_per_call since the last CONFIG RESETSTAT, from INFO commandstats.
double ServerUsPerEvalsha(bp::ValkeyConnection& admin) {
  auto r = admin.Command({"INFO", "commandstats"});
  if (!r.ok()) return -1;
  const std::string& text = r->str;
  const auto at = text.find("cmdstat_evalsha:");
  if (at == std::string::npos) return -1;
  const auto u = text.find("usec_per_call=", at);
  if (u == std::string::npos) return -1;
  return std::strtod(text.c_str() + u + 14, nullptr);
}

// p50 and p99 of the EVALSHA execution times (us) since the last CONFIG
// RESETSTAT, from INFO latencystats (Redis >= 7: a per-command HdrHistogram,
// kept by default, latency-tracking yes). {-1, -1} if absent.
std::pair<double, double> EvalshaPercentiles(bp::ValkeyConnection& admin) {
  auto r = admin.Command({"INFO", "latencystats"});
  if (!r.ok()) return {-1, -1};
  const std::string& text = r->str;
  const auto at = text.find("latency_percentiles_usec_evalsha:");
  if (at == std::string::npos) return {-1, -1};
  const auto p50 = text.find("p50=", at), p99 = text.find("p99=", at);
  if (p50 == std::string::npos || p99 == std::string::npos) return {-1, -1};
  return {std::strtod(text.c_str() + p50 + 4, nullptr),
          std::strtod(text.c_str() + p99 + 4, nullptr)};
}

void ServerCounters(benchmark::State& state, bp::ValkeyConnection& admin) {
  state.counters["server_us_per_call"] = ServerUsPerEvalsha(admin);
  const auto [p50, p99] = EvalshaPercentiles(admin);
  state.counters["server_us_p50"] = p50;
  state.counters["server_us_p99"] = p99;
}

void BM_TrivialEvalsha(benchmark::State& state) {
  bp::ValkeyConnection conn(AdminOptions());
  bp::ValkeyConnection admin(AdminOptions());
  const std::vector<std::string> keys = {"bp:{bench}"};
  if (!conn.EvalScript(bp::lua::kNoopLua, keys, {}).ok()) {
    state.SkipWithError("noop script failed");
    return;
  }
  admin.Command({"CONFIG", "RESETSTAT"});
  for (auto _ : state) {
    auto r = conn.EvalScript(bp::lua::kNoopLua, keys, {});
    benchmark::DoNotOptimize(r);
  }
  ServerCounters(state, admin);
  state.SetItemsProcessed(state.iterations());
}

// The trivial script sent the key and arguments of an admission (AdmitArgs in
// lib/gate/src/gate.cpp: tenant, priority, requests, tokens, max_tokens, mode,
// ablation, queue_ttl_ms, now_ms), through the same connection code.
void BM_TrivialEvalshaAdmitArgs(benchmark::State& state) {
  bp::ValkeyConnection conn(AdminOptions());
  bp::ValkeyConnection admin(AdminOptions());
  const std::vector<std::string> keys = {"bp:{bench}:state"};
  std::vector<std::string> args = {"tenant0",   "1",    "1",       "100", "0",
                                   "reconcile", "none", "3600000", "0"};
  if (!conn.EvalScript(bp::lua::kNoopLua, keys, args).ok()) {
    state.SkipWithError("noop script failed");
    return;
  }
  admin.Command({"CONFIG", "RESETSTAT"});
  int64_t i = 0;
  for (auto _ : state) {
    args[1] = std::to_string(1 + i % 3);  // a class 1-3, as in BM_Admit
    auto r = conn.EvalScript(bp::lua::kNoopLua, keys, args);
    benchmark::DoNotOptimize(r);
    ++i;
  }
  ServerCounters(state, admin);
  state.SetItemsProcessed(state.iterations());
}

void BM_Admit(benchmark::State& state) {
  const int n = static_cast<int>(state.range(0));
  bp::GateOptions o;
  o.url = g_server->url();
  o.target = "bench" + std::to_string(n);
  o.command_timeout_ms = 5000;
  o.queue_ttl_ms = 3'600'000;
  bp::Gate gate(o);
  bp::GateAdmin setup(gate);
  if (!gate.Ping().ok() || !setup.Reset().ok()) {
    state.SkipWithError("gate setup failed");
    return;
  }
  setup.SetPriorityWeights({0.5, 0.3, 0.2});
  setup.SetTuning(bp::GateTuning{50, 0.5, 600'000, 600'000});  // stay backlogged
  // Register n queues under a tiny cap: every one but the first is deferred,
  // so all n are active and in the backlogged set.
  setup.SetCaps(bp::GateCaps{1, 0, 1.0});
  std::vector<std::string> tenants;
  for (int i = 0; i < n; ++i) {
    tenants.push_back("tenant" + std::to_string(i));
    gate.Admit(bp::AdmitRequest{tenants.back(), 1 + i % 3, {1, 0}, 0, 0});
  }
  // Now every call is admitted, or (overloaded) about `cap` per second are
  // and the rest deferred, as under a real cap where each call served takes a
  // few Admit calls (docs/results.md, "Scale": 3-15 Admit calls per OK).
  const double cap = state.range(1) > 0 ? static_cast<double>(state.range(1)) : 1e9;
  setup.SetCaps(bp::GateCaps{cap, 1e12, 1.0});
  bp::ValkeyConnection admin(AdminOptions());
  const std::string ticket_prefix = TicketPrefix(admin, o.target);
  if (ticket_prefix.empty()) {
    state.SkipWithError("state.lua keys failed");
    return;
  }
  admin.Command({"CONFIG", "RESETSTAT"});
  int64_t i = 0, admits = 0;
  std::vector<std::string> issued = {"DEL"};
  for (auto _ : state) {
    // Tenant q keeps the class it was registered with: exactly n queues
    // (class 1 + i % 3 with n not a multiple of 3 made 3n, n of them backlogged).
    const int64_t q = i % n;
    bp::Decision d = gate.Admit(bp::AdmitRequest{
        tenants[static_cast<size_t>(q)], 1 + static_cast<int>(q % 3), {1, 100}, 0, 0});
    if (d.verdict == bp::Verdict::kAdmit) {
      ++admits;
      issued.push_back(ticket_prefix + d.ticket);
    }
    ++i;
    if (issued.size() > 1000) {  // the workers' releases, off the clock
      state.PauseTiming();
      admin.Command(issued);
      issued.resize(1);
      state.ResumeTiming();
    }
  }
  ServerCounters(state, admin);
  state.counters["admit_fraction"] = static_cast<double>(admits) / static_cast<double>(i);
  state.counters["fail_opens"] = static_cast<double>(gate.fail_open_count());
  auto zcard = admin.Command({"ZCARD", "bp:{" + o.target + "}:bl"});
  state.counters["backlogged"] = zcard.ok() ? static_cast<double>(zcard->integer) : -1;
  state.SetItemsProcessed(state.iterations());
}

// admit.lua with its running totals on (the gate's text) and off (the same
// text with prelude.lua's COUNTERS switch false), paired: each iteration
// sends one admission to each of two servers, the "on" script to this
// process's server and the "off" one to a second server, same queues and
// cap, so both see the same machine state call by call (this VM is shared:
// runs apart differ by more than the counters cost). Counters
// server_us_on/off are each server's EVALSHA usec_per_call; on_over_off
// their ratio.
void BM_AdmitCountersPaired(benchmark::State& state) {
  static bp::test::ValkeyServer second;
  if (!second.running()) {
    state.SkipWithError(("second server: " + second.error()).c_str());
    return;
  }
  const int n = static_cast<int>(state.range(0));
  const std::string on(bp::lua::kAdmitLua);
  std::string off = on;
  const std::string flag = "local COUNTERS = true";
  const size_t at = off.find(flag);
  if (at == std::string::npos) {
    state.SkipWithError("admit.lua has no COUNTERS switch");
    return;
  }
  off.replace(at, flag.size(), "local COUNTERS = false");
  struct Side {
    std::string url, text, target, ticket_prefix;
    std::unique_ptr<bp::ValkeyConnection> conn, admin;
    std::vector<std::string> issued = {"DEL"};
  };
  Side sides[2];
  sides[0].url = g_server->url(), sides[0].text = on, sides[0].target = "pairon";
  sides[1].url = second.url(), sides[1].text = off, sides[1].target = "pairoff";
  std::vector<std::string> tenants;
  for (int i = 0; i < n; ++i) tenants.push_back("tenant" + std::to_string(i));
  const double cap = state.range(1) > 0 ? static_cast<double>(state.range(1)) : 1e9;
  for (Side& side : sides) {
    bp::GateOptions o;
    o.url = side.url;
    o.target = side.target;
    o.command_timeout_ms = 5000;
    o.queue_ttl_ms = 3'600'000;
    bp::Gate gate(o);
    bp::GateAdmin setup(gate);
    if (!gate.Ping().ok() || !setup.Reset().ok()) {
      state.SkipWithError("gate setup failed");
      return;
    }
    setup.SetPriorityWeights({0.5, 0.3, 0.2});
    setup.SetTuning(bp::GateTuning{50, 0.5, 600'000, 600'000});
    setup.SetCaps(bp::GateCaps{1, 0, 1.0});
    for (int i = 0; i < n; ++i) {
      gate.Admit(bp::AdmitRequest{tenants[static_cast<size_t>(i)], 1 + i % 3, {1, 0}, 0, 0});
    }
    setup.SetCaps(bp::GateCaps{cap, 1e12, 1.0});
    side.conn = std::make_unique<bp::ValkeyConnection>(bp::ValkeyOptions{side.url, 1000, 5000});
    side.admin = std::make_unique<bp::ValkeyConnection>(bp::ValkeyOptions{side.url, 1000, 5000});
    side.ticket_prefix = TicketPrefix(*side.admin, side.target);
    if (side.ticket_prefix.empty()) {
      state.SkipWithError("state.lua keys failed");
      return;
    }
  }
  std::vector<std::string> args = {"", "1", "1", "100", "0", "reconcile", "none", "3600000", "0"};
  for (Side& side : sides) {
    if (!side.conn->EvalScript(side.text, {"bp:{" + side.target + "}:state"}, args).ok()) {
      state.SkipWithError("admit script failed");
      return;
    }
    side.admin->Command({"CONFIG", "RESETSTAT"});
  }
  int64_t i = 0;
  for (auto _ : state) {
    const int64_t q = i % n;
    args[0] = tenants[static_cast<size_t>(q)];
    args[1] = std::to_string(1 + q % 3);
    for (Side& side : sides) {
      auto r = side.conn->EvalScript(side.text, {"bp:{" + side.target + "}:state"}, args);
      if (r.ok() && r->elements.size() == 2 && r->elements[0].AsString() == "ADMIT") {
        side.issued.push_back(side.ticket_prefix + r->elements[1].AsString());
      }
      if (side.issued.size() > 1000) {  // the workers' releases, off the clock
        state.PauseTiming();
        side.admin->Command(side.issued);
        side.issued.resize(1);
        state.ResumeTiming();
      }
    }
    ++i;
  }
  const double on_us = ServerUsPerEvalsha(*sides[0].admin);
  const double off_us = ServerUsPerEvalsha(*sides[1].admin);
  state.counters["server_us_on"] = on_us;
  state.counters["server_us_off"] = off_us;
  state.counters["on_over_off"] = off_us > 0 ? on_us / off_us : 0;
  state.SetItemsProcessed(state.iterations());
}

BENCHMARK(BM_TrivialEvalsha)->UseRealTime()->MinTime(2.0);
BENCHMARK(BM_TrivialEvalshaAdmitArgs)->UseRealTime()->MinTime(2.0);
// Args: active queues, then the request cap per second (0 = no cap: every
// call admitted; 2000 = overloaded: most calls deferred).
BENCHMARK(BM_Admit)
    ->ArgNames({"queues", "cap"})
    ->Args({10, 0})
    ->Args({1000, 0})
    ->Args({10000, 0})
    ->Args({10, 2000})
    ->Args({1000, 2000})
    ->Args({10000, 2000})
    ->UseRealTime()
    ->MinTime(2.0);
// Args: as BM_Admit's.
BENCHMARK(BM_AdmitCountersPaired)
    ->ArgNames({"queues", "cap"})
    ->Args({1000, 0})
    ->Args({1000, 2000})
    ->UseRealTime()
    ->MinTime(2.0);

}  // namespace

int main(int argc, char** argv) {
  bp::test::ValkeyServer server;
  if (!server.running()) {
    std::fprintf(stderr, "gate_bench: %s\n", server.error().c_str());
    return 1;
  }
  g_server = &server;
  // The server binary and version in the report's context (docs/servers.md).
  bp::GateAdmin probe(bp::GateOptions{.url = server.url(), .target = "bench-probe"});
  auto named = probe.Server();
  benchmark::AddCustomContext(
      "server", (named.ok() ? *named : named.status().ToString()) + " (" +
                    bp::test::FindValkeyBinary() + ")");
  benchmark::Initialize(&argc, argv);
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
