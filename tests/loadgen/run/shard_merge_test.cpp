// The partition of a workload over processes, records files and the merge of
// the parts (shard.h, records_io.h), on hand-made records: exact values.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <map>

#include "bp/loadgen/metrics.h"
#include "bp/loadgen/records_io.h"
#include "bp/loadgen/shard.h"
#include "metrics_fixture.h"

namespace bp::loadgen {
namespace {

namespace fs = std::filesystem;

Workload FiveTenants() {
  Workload w;
  w.name = "five";
  w.source = "five.json";
  w.slots = 7;
  for (int i = 0; i < 5; ++i) {
    TenantSpec t;
    t.id = std::string(1, 't') + static_cast<char>('0' + i);
    w.tenants.push_back(t);
  }
  return w;
}

TEST(ShardParse, AcceptsIOfNAndNamesTheFlagOtherwise) {
  auto s = ParseShard("1/3");
  ASSERT_TRUE(s.ok());
  EXPECT_EQ(s->index, 1);
  EXPECT_EQ(s->count, 3);
  for (const char* bad : {"3/3", "-1/2", "1", "1/0", "a/2", "0/257", "1/2/3", ""}) {
    auto r = ParseShard(bad);
    ASSERT_FALSE(r.ok()) << bad;
    EXPECT_NE(r.status().message().find("--shard must be I/N"), std::string::npos) << bad;
  }
}

TEST(ShardWorkloadTest, TenantsRoundRobinSlotsSplit) {
  const Workload w = FiveTenants();
  ShardInfo s0{0, 2, 0, {}}, s1{1, 2, 0, {}};
  auto p0 = ShardWorkload(w, &s0);
  auto p1 = ShardWorkload(w, &s1);
  ASSERT_TRUE(p0.ok() && p1.ok());
  EXPECT_EQ(s0.tenant_indices, (std::vector<int>{0, 2, 4}));
  EXPECT_EQ(s1.tenant_indices, (std::vector<int>{1, 3}));
  EXPECT_EQ(s0.tenants_total, 5);
  ASSERT_EQ(p1->tenants.size(), 2u);
  EXPECT_EQ(p1->tenants[1].id, "t3");
  EXPECT_EQ(p0->slots, 4);  // 7 = 4 + 3
  EXPECT_EQ(p1->slots, 3);

  ShardInfo six{0, 6, 0, {}};
  auto r = ShardWorkload(w, &six);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().message(), "five.json: 5 tenants cannot be split over 6 processes");
  Workload scenario = w;
  scenario.events.push_back(ScenarioEvent{});
  r = ShardWorkload(scenario, &s0);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().message(), "five.json: scenario events cannot be split over processes");
}

// Part `index` of two: the hand-made run's tenant a (global 0) in part 0,
// tenant b (global 1) in part 1, with local activity and workflow ids, its
// wall-clock start 1e9 us + skew_us.
ShardRecords Part(int index, int64_t skew_us) {
  RunRecords all = testing::HandMadeRun();
  ShardRecords p;
  p.shard = {index, 2, 2, {index}};
  RunRecords& r = p.records;
  r = all;
  r.tenants = {all.tenants[static_cast<size_t>(index)]};
  r.activities.clear();
  r.attempts.clear();
  r.slots_held.clear();
  r.workflows.clear();
  r.slots = 2;
  r.gate_fail_opens = static_cast<uint64_t>(index + 1);
  r.gate_breaker_opens = static_cast<uint64_t>(10 * (index + 1));
  r.gate_unreleased = static_cast<uint64_t>(100 * (index + 1));
  r.gate_fail_opens_unreachable = static_cast<uint64_t>(index + 1);
  r.gate_reseeds = static_cast<uint64_t>(index + 1);
  r.gate_release_errors = static_cast<uint64_t>(1000 * (index + 1));
  r.gate_target = "g";
  r.start_unix_us = 1'000'000'000 + skew_us;
  std::map<int64_t, int64_t> act, wf;
  for (WorkflowRecord w : all.workflows) {
    if (w.tenant_index != index) continue;
    wf[w.id] = static_cast<int64_t>(wf.size());
    w.id = wf[w.id];
    w.tenant_index = 0;
    r.workflows.push_back(w);
  }
  for (ActivityRecord a : all.activities) {
    if (a.tenant_index != index) continue;
    act[a.id] = static_cast<int64_t>(act.size());
    a.id = act[a.id];
    a.workflow_id = wf.at(a.workflow_id);
    a.tenant_index = 0;
    r.activities.push_back(a);
  }
  for (AttemptRecord x : all.attempts) {
    if (x.tenant_index != index) continue;
    x.activity_id = act.at(x.activity_id);
    x.tenant_index = 0;
    r.attempts.push_back(x);
  }
  for (SlotInterval x : all.slots_held) {
    if (x.tenant_index != index) continue;
    x.activity_id = act.at(x.activity_id);
    x.tenant_index = 0;
    r.slots_held.push_back(x);
  }
  r.gate_decisions = {{5'000, 0, GateVerdict::kAdmit, 321}};
  r.deferrals = {{0, 0, 7'000, 40'000, "fair"}};
  return p;
}

TEST(ShardMerge, ShiftsOntoTheEarliestStartRenumbersAndRestoresTenantOrder) {
  // Part 1 started 250 ms after part 0: its times move by +250 ms.
  auto merged = MergeShards({Part(1, 250'000), Part(0, 0)});
  ASSERT_TRUE(merged.ok()) << merged.status().message();
  const RunRecords& m = *merged;
  ASSERT_EQ(m.tenants.size(), 2u);
  EXPECT_EQ(m.tenants[0].id, "a");
  EXPECT_EQ(m.tenants[1].id, "b");
  EXPECT_EQ(m.tenants[0].finish_us, 1'000'000);
  EXPECT_EQ(m.tenants[1].finish_us, 1'750'000);
  EXPECT_EQ(m.tenants[1].start_us, 250'000);
  EXPECT_EQ(m.start_unix_us, 1'000'000'000);
  EXPECT_EQ(m.slots, 4);
  EXPECT_EQ(m.gate_fail_opens, 3u);
  EXPECT_EQ(m.gate_breaker_opens, 30u);  // 10 + 20
  EXPECT_EQ(m.gate_unreleased, 300u);    // 100 + 200
  EXPECT_EQ(m.gate_fail_opens_unreachable, 3u);  // 1 + 2
  EXPECT_EQ(m.gate_reseeds, 3u);
  EXPECT_EQ(m.gate_release_errors, 3000u);  // 1000 + 2000
  EXPECT_EQ(m.end_us, 1'600'000 + 250'000);
  ASSERT_EQ(m.activities.size(), 6u);
  for (size_t i = 0; i < m.activities.size(); ++i) EXPECT_EQ(m.activities[i].id, int64_t(i));
  // Part 0 (tenant a) first: its three activities, then b's, workflow 1.
  EXPECT_EQ(m.activities[3].tenant_index, 1);
  EXPECT_EQ(m.activities[3].workflow_id, 1);
  EXPECT_EQ(m.activities[5].workflow_id, 2);
  EXPECT_EQ(m.activities[3].scheduled_us, 250'000);
  EXPECT_EQ(m.activities[3].completed_us, 530'000 + 250'000);
  EXPECT_EQ(m.activities[5].final_answer_us, 700'000 + 250'000);
  ASSERT_EQ(m.attempts.size(), 11u);
  for (size_t i = 1; i < m.attempts.size(); ++i) {
    EXPECT_LE(m.attempts[i - 1].send_us, m.attempts[i].send_us);
  }
  ASSERT_EQ(m.gate_decisions.size(), 2u);
  EXPECT_EQ(m.gate_decisions[1].at_us, 255'000);
  EXPECT_EQ(m.gate_decisions[1].tenant_index, 1);
  EXPECT_EQ(m.gate_decisions[1].latency_us, 321);
  EXPECT_EQ(m.deferrals[1].activity_id, 3);
  ASSERT_EQ(m.workflows.size(), 3u);
  EXPECT_EQ(m.workflows[2].id, 2);
  EXPECT_EQ(m.workflows[2].tenant_index, 1);
  EXPECT_EQ(m.workflows[2].start_us, 250'000);
  EXPECT_EQ(m.workflows[2].end_us, -1);  // "never" stays -1
  EXPECT_EQ(m.slots_held.back().release_us, 1'400'000 + 250'000);
}

TEST(ShardMerge, MergedMetricsEqualTheSingleRunsWhenAligned) {
  // Same start: the merge of the two halves is the hand-made run, so the
  // metrics are the single-process metrics (fairness over merged records).
  auto merged = MergeShards({Part(0, 0), Part(1, 0)});
  ASSERT_TRUE(merged.ok());
  RunRecords single = testing::HandMadeRun();
  const RunMetrics a = ComputeRunMetrics(single);
  const RunMetrics b = ComputeRunMetrics(*merged);
  EXPECT_DOUBLE_EQ(b.contention_window_s, a.contention_window_s);
  EXPECT_DOUBLE_EQ(b.achievement_jain, a.achievement_jain);
  EXPECT_DOUBLE_EQ(b.drf_jain, a.drf_jain);
  EXPECT_EQ(b.ok_calls, a.ok_calls);
  ASSERT_EQ(b.tenants.size(), 2u);
  EXPECT_DOUBLE_EQ(b.tenants[1].ok_rps, a.tenants[1].ok_rps);
  EXPECT_DOUBLE_EQ(b.tenants[0].ideal_rps, a.tenants[0].ideal_rps);
  // Admit latency over both parts' decisions, real ms (not scaled by the speedup 2).
  EXPECT_EQ(b.gate_admit_real.count, 2);
  EXPECT_DOUBLE_EQ(b.gate_admit_real.p50_ms, 0.321);
  EXPECT_EQ(a.gate_admit_real.count, 0);
}

TEST(ShardMerge, RejectsMissingDuplicateAndMismatchedParts) {
  auto r = MergeShards({Part(0, 0)});
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().message(), "cross-priority bp #0: part(s) 1/2 missing (have 0/2)");
  ShardRecords other = Part(1, 0);
  other.records.configuration = "naive";
  r = MergeShards({Part(0, 0), other});
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().message(), "cross-priority bp #0: part 1/2 has a different configuration");
  ShardRecords twice = Part(1, 0);
  twice.shard.tenant_indices = {0};
  r = MergeShards({Part(0, 0), twice});
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("tenant 0 out of range or twice"), std::string::npos);
  ShardRecords target = Part(1, 0);
  target.records.gate_target = "h";
  EXPECT_FALSE(MergeShards({Part(0, 0), target}).ok());
}

// Each wrong set of parts has its own message, naming the
// parts (and their files).
TEST(ShardMerge, NamesThePartGivenTwiceTheMissingOnesAndAnotherCount) {
  ShardRecords a = Part(1, 0), b = Part(1, 0);
  a.source = "x/shard-1.records.json";
  b.source = "y/shard-1.records.json";
  auto r = MergeShards({Part(0, 0), a, b});
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().message(),
            "cross-priority bp #0: part 1/2 given twice (x/shard-1.records.json and "
            "y/shard-1.records.json)");
  r = MergeShards({Part(1, 0), Part(1, 0)});  // not "a different shard numbering"
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().message(), "cross-priority bp #0: part 1/2 given twice");
  // Parts 1 and 3 of 3 (0/3 and 2/3): the second one is missing.
  ShardRecords first = Part(0, 0), third = Part(1, 0);
  first.shard.count = third.shard.count = 3;
  third.shard.index = 2;
  r = MergeShards({third, first});
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().message(), "cross-priority bp #0: part(s) 1/3 missing (have 0/3, 2/3)");
  ShardRecords of3 = Part(1, 0);
  of3.shard.count = 3;
  of3.source = "z.records.json";
  r = MergeShards({Part(0, 0), of3});
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().message(),
            "cross-priority bp #0: part 1/3 (z.records.json) is a part of 3, part 0/2 of 2");
}

TEST(ShardMerge, RefusesStartsFartherApartThanTenSeconds) {
  // 10 s apart exactly: merged (part 1's times move by +10 s).
  auto r = MergeShards({Part(0, 0), Part(1, 10'000'000)});
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_EQ(r->tenants[1].start_us, 10'000'000);
  r = MergeShards({Part(0, 0), Part(1, 10'000'001)});
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().message(),
            "cross-priority bp #0: part 1/2 started 10.000 s after part 0/2: start_unix_us "
            "1010000001 vs 1000000000; the parts of one run start within 10 s of each other");
  // A start of 0 next to one at the real epoch (a 17-billion-second run before).
  ShardRecords zero = Part(0, 0), now = Part(1, 0);
  zero.records.start_unix_us = 0;
  zero.source = "a.records.json";
  now.records.start_unix_us = 1'764'650'000'000'000;
  r = MergeShards({now, zero});
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().message(),
            "cross-priority bp #0: part 1/2 started 1764650000.000 s after part 0/2 "
            "(a.records.json): start_unix_us 1764650000000000 vs 0; the parts of one run start "
            "within 10 s of each other");
}

TEST(ShardMerge, RefusesRecordsNamingNoTenantOrActivityAndATenantInTwoParts) {
  ShardRecords p = Part(1, 0);
  p.records.attempts[1].activity_id = 99;  // part 1 has activities 0..2
  auto r = MergeShards({Part(0, 0), p});   // an index past the part's activities
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().message(),
            "cross-priority bp #0: part 1/2: attempts[1].activity_id: 99 names no activity (the "
            "part has 3: 0..2)");
  p = Part(1, 0);
  p.records.activities[2].tenant_index = 1;  // one tenant in a part of two
  r = MergeShards({Part(0, 0), p});
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().message(),
            "cross-priority bp #0: part 1/2: activities[2].tenant_index: 1 names no tenant (the "
            "part has 1: 0..0)");
  p = Part(1, 0);
  p.records.tenants[0].id = "a";  // tenant a is part 0's
  r = MergeShards({Part(0, 0), p});
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().message(), "cross-priority bp #0: tenant \"a\" in part 0/2 and in part 1/2");

  RunRecords ok = Part(0, 0).records;
  EXPECT_TRUE(ValidateRecords(ok).ok());
  RunRecords bad = ok;
  bad.activities[1].id = 7;
  EXPECT_EQ(ValidateRecords(bad).message(),
            "activities[1].id: 7, expected 1 (ids are the row numbers)");
  bad = ok;
  bad.slots_held[0].activity_id = -1;
  EXPECT_EQ(ValidateRecords(bad).message(),
            "slots_held[0].activity_id: -1 names no activity (the part has 3: 0..2)");
  bad = ok;
  bad.deferrals[0].tenant_index = 4;
  EXPECT_EQ(ValidateRecords(bad).message(),
            "deferrals[0].tenant_index: 4 names no tenant (the part has 1: 0..0)");
  bad = ok;
  bad.gate_decisions[0].tenant_index = -1;
  EXPECT_EQ(ValidateRecords(bad).message(),
            "gate_decisions[0].tenant_index: -1 names no tenant (the part has 1: 0..0)");
  bad = ok;
  bad.activities[0].workflow_id = 5;
  EXPECT_EQ(ValidateRecords(bad).message(),
            "activities[0].workflow_id: 5 names no workflow (the part has 1: 0..0)");
  bad = ok;  // the outside client: tenant and activity -1
  bad.outside_attempts.push_back(testing::Attempt(-1, -1, 9, 200));
  EXPECT_TRUE(ValidateRecords(bad).ok());
}

TEST(ShardStart, StartAtWithinAnHourOfNowElseRefusedWithAHint) {
  const int64_t now = 1'764'650'000'000;  // unix ms
  EXPECT_TRUE(CheckStartAt(now, now).ok());
  EXPECT_TRUE(CheckStartAt(now + 3'600'000, now).ok());
  EXPECT_TRUE(CheckStartAt(now - 3'600'000, now).ok());
  EXPECT_EQ(CheckStartAt(now + 3'600'001, now).message(),
            "--start-at 1764653600001: 60.0 min in the future (more than 1 h); it must be unix "
            "ms within 1 h of now (1764650000000), e.g. $(( $(date +%s%3N) + 5000 ))");
  EXPECT_EQ(CheckStartAt(now - 5'400'000, now).message().substr(0, 68),
            "--start-at 1764644600000: 90.0 min in the past (more than 1 h); it m");
  EXPECT_EQ(CheckStartAt(1'764'650'003, now).message(),
            "--start-at 1764650003: 55.9 years in the past (seconds? --start-at takes unix ms: "
            "1764650003000); it must be unix ms within 1 h of now (1764650000000), e.g. $(( "
            "$(date +%s%3N) + 5000 ))");
  EXPECT_EQ(CheckStartAt(17'646'500'050'000, now).message(),
            "--start-at 17646500050000: 503.3 years in the future (an extra digit? "
            "1764650005000 is within the hour); it must be unix ms within 1 h of now "
            "(1764650000000), e.g. $(( $(date +%s%3N) + 5000 ))");
  EXPECT_EQ(CheckStartAt(now + 9 * 86'400'000LL, now).message().substr(0, 41),
            "--start-at 1765427600000: 9.0 days in the");
  EXPECT_FALSE(CheckStartAt(INT64_MAX, now).ok());  // no overflow
}

TEST(RecordsFile, RoundTripsEveryField) {
  const fs::path dir = fs::temp_directory_path() / ("bp-records-" + std::to_string(::getpid()));
  ShardRecords p = Part(1, 123);
  p.records.cap_tokens_per_s = 1234.5678901234567;
  p.records.activities[0].fail_cause = "gate_reject";
  p.records.activities[0].cancelled = true;
  p.records.attempts[0].bound = "tokens";
  p.records.attempts[0].proxy_local = true;
  AttemptRecord& cut = p.records.attempts[1];  // a stream cut after 3 token events
  cut.stream = 2;
  cut.ttft_us = 7'000;
  cut.token_events = 3;
  p.records.outside_attempts.push_back(testing::Attempt(-1, -1, 9, 429, "requests"));
  p.records.outside_attempts.push_back(testing::Attempt(-1, -1, 12, 200));
  p.records.outside_attempts.back().tokens = 150;
  p.records.tenants[0].unservable = true;
  p.records.events.push_back({2, 1, 10, 20, false, "why \"not\""});
  ASSERT_TRUE(WriteRecordsFile(dir / "x.records.json", p).ok());
  auto back = ReadRecordsFile(dir / "x.records.json");
  ASSERT_TRUE(back.ok()) << back.status().message();
  const RunRecords& a = p.records;
  const RunRecords& b = back->records;
  EXPECT_EQ(back->shard.index, 1);
  EXPECT_EQ(back->shard.tenant_indices, std::vector<int>{1});
  EXPECT_EQ(b.start_unix_us, a.start_unix_us);
  EXPECT_EQ(b.cap_tokens_per_s, a.cap_tokens_per_s);  // exact, not near
  EXPECT_EQ(b.gate_fail_opens, 2u);
  EXPECT_EQ(b.gate_breaker_opens, 20u);
  EXPECT_EQ(b.gate_unreleased, 200u);
  EXPECT_EQ(b.gate_release_errors, 2000u);
  ASSERT_EQ(b.activities.size(), a.activities.size());
  EXPECT_EQ(b.activities[0].fail_cause, "gate_reject");
  EXPECT_TRUE(b.activities[0].cancelled);
  EXPECT_EQ(b.activities[2].final_answer_us, a.activities[2].final_answer_us);
  EXPECT_EQ(b.workflows.back().end_us, -1);
  EXPECT_EQ(b.attempts[0].bound, "tokens");
  EXPECT_TRUE(b.attempts[0].proxy_local);
  EXPECT_EQ(b.attempts[1].stream, 2);
  EXPECT_EQ(b.attempts[1].ttft_us, 7'000);
  EXPECT_EQ(b.attempts[1].itl_us, -1);
  EXPECT_EQ(b.attempts[1].token_events, 3);
  EXPECT_EQ(b.attempts[0].token_events, 0);  // a plain row has none
  ASSERT_EQ(b.outside_attempts.size(), 2u);
  EXPECT_EQ(b.outside_attempts[0].status, 429);
  EXPECT_EQ(b.outside_attempts[1].tokens, 150);
  EXPECT_TRUE(b.tenants[0].unservable);
  ASSERT_EQ(b.events.size(), 1u);
  EXPECT_EQ(b.events[0].detail, "why \"not\"");
  EXPECT_FALSE(b.events[0].applied);
  EXPECT_EQ(b.gate_decisions[0].latency_us, 321);
  EXPECT_EQ(b.deferrals[0].cause, "fair");
  EXPECT_EQ(b.tenants[0].priority_weight, a.tenants[0].priority_weight);

  std::ofstream(dir / "bad.records.json") << R"({"format": "bp-loadgen-records/1", "workload": 3})";
  auto bad = ReadRecordsFile(dir / "bad.records.json");
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("bad.records.json: workload: "), std::string::npos)
      << bad.status().message();
  fs::remove_all(dir);
}

}  // namespace
}  // namespace bp::loadgen
