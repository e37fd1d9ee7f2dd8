// Scenario events (scenario.h): parsing with exact values, validation with
// its messages, the schedule's scaling and order, and the shipped scenarios.
#include <gtest/gtest.h>

#include <filesystem>

#include "bp/loadgen/scenario.h"
#include "bp/loadgen/workload.h"

namespace bp::loadgen {
namespace {

using nlohmann::json;

json Base() {
  json tenant = {{"id", "a"},      {"priority", 1},       {"concurrency", 1},
                 {"workflows", 1}, {"prompt_tokens", 10}, {"max_tokens", 5}};
  json late = tenant;
  late["id"] = "late";
  late["priority"] = 2;
  return {{"name", "s"},
          {"slots", 4},
          {"run_length_cap_s", 60},
          {"priority_weights", {0.5, 0.5}},
          {"tenants", {tenant, late}},
          {"upstream",
           {{"limits",
             {{{"dimension", "requests"},
               {"algorithm", "fixed_window"},
               {"limit", 60},
               {"window_s", 1.0}}}}}}};
}

std::string ErrorOf(json events) {
  json doc = Base();
  doc["events"] = std::move(events);
  auto w = ParseWorkload(doc, "s.json");
  return w.ok() ? std::string("ok") : w.status().message();
}

TEST(ScenarioEvents, ParsesEveryTypeWithItsFields) {
  json doc = Base();
  doc["events"] = json::parse(R"([
    {"type": "join", "at_s": 5, "tenant": "late"},
    {"type": "leave", "at_s": 30.5, "tenant": "late", "window_s": 10, "settle_s": 2},
    {"type": "upstream_limits", "at_s": 20, "label": "halved", "limits": [
      {"dimension": "requests", "algorithm": "fixed_window", "limit": 30, "window_s": 1},
      {"dimension": "tokens", "algorithm": "fixed_window", "limit": 12000, "window_s": 2}]},
    {"type": "tenant_weight", "at_s": 10, "tenant": "a", "weight": 3},
    {"type": "class_omega", "at_s": 11, "priority": 2, "omega": 1.5},
    {"type": "outside_traffic", "at_s": 12, "share": 0.2, "prompt_tokens": 40},
    {"type": "state_outage", "at_s": 40, "duration_s": 5, "mode": "stop"}
  ])");
  auto w = ParseWorkload(doc, "s.json");
  ASSERT_TRUE(w.ok()) << w.status().message();
  const auto& e = w->events;
  ASSERT_EQ(e.size(), 7u);
  EXPECT_EQ(e[0].type, EventType::kJoin);
  EXPECT_EQ(e[0].tenant_index, 1);
  EXPECT_TRUE(w->JoinsLater(1));
  EXPECT_FALSE(w->JoinsLater(0));
  EXPECT_DOUBLE_EQ(e[1].at_s, 30.5);
  EXPECT_DOUBLE_EQ(e[1].window_s, 10);
  EXPECT_DOUBLE_EQ(e[1].settle_s, 2);
  EXPECT_DOUBLE_EQ(e[2].caps.requests_per_s, 30);  // 30 / 1 s
  EXPECT_DOUBLE_EQ(e[2].caps.tokens_per_s, 6000);  // 12000 / 2 s
  EXPECT_DOUBLE_EQ(e[2].window_s, 20);             // default
  EXPECT_EQ(EventText(e[2]), "halved");
  EXPECT_EQ(e[3].tenant_index, 0);
  EXPECT_DOUBLE_EQ(e[3].weight, 3);
  EXPECT_EQ(EventText(e[3]), "weight a = 3");
  EXPECT_EQ(e[4].priority, 2);
  EXPECT_DOUBLE_EQ(e[4].omega, 1.5);
  EXPECT_EQ(EventText(e[4]), "omega P2 = 1.5");
  EXPECT_DOUBLE_EQ(e[5].share, 0.2);
  EXPECT_EQ(e[5].prompt_tokens, 40);
  EXPECT_EQ(e[5].max_tokens, 50);  // default
  EXPECT_EQ(EventText(e[5]), "outside traffic 20 % of the cap");
  EXPECT_EQ(e[6].mode, OutageMode::kStop);
  EXPECT_EQ(EventText(e[6]), "valkey stopped for 5 s");
  EXPECT_EQ(EventTypeName(EventType::kStateOutage), std::string("state_outage"));
}

TEST(ScenarioEvents, BadEventsNameTheField) {
  EXPECT_EQ(ErrorOf(json::object()), "s.json: events: must be an array");
  EXPECT_EQ(ErrorOf({{{"type", "explode"}, {"at_s", 1}}}),
            "s.json: events[0].type: must be join|leave|upstream_limits|tenant_weight|"
            "class_omega|outside_traffic|state_outage, got explode");
  EXPECT_EQ(ErrorOf({{{"type", "join"}, {"tenant", "a"}}}),
            "s.json: events[0].at_s: missing (required)");
  EXPECT_EQ(ErrorOf({{{"type", "join"}, {"at_s", 60}, {"tenant", "a"}}}),
            "s.json: events[0].at_s: must be before the run length cap (60 s), got 60");
  EXPECT_EQ(ErrorOf({{{"type", "join"}, {"at_s", -1}, {"tenant", "a"}}}),
            "s.json: events[0].at_s: must be a finite number >= 0, got -1");
  EXPECT_EQ(ErrorOf({{{"type", "join"}, {"at_s", 1}, {"tenant", "zz"}}}),
            "s.json: events[0].tenant: no tenant with id zz");
  EXPECT_EQ(ErrorOf({{{"type", "join"}, {"at_s", 1}, {"tenant", "a"}, {"weight", 2}}}),
            "s.json: events[0].weight: unknown field for type join");
  EXPECT_EQ(ErrorOf({{{"type", "join"}, {"at_s", 1}, {"tenant", "a"}},
                     {{"type", "join"}, {"at_s", 2}, {"tenant", "a"}}}),
            "s.json: events[1].tenant: a already joins earlier");
  EXPECT_EQ(ErrorOf({{{"type", "leave"}, {"at_s", 5}, {"tenant", "a"}},
                     {{"type", "join"}, {"at_s", 8}, {"tenant", "a"}}}),
            "s.json: events: a leaves at 5 s, not after it joins at 8 s");
  EXPECT_EQ(ErrorOf({{{"type", "tenant_weight"}, {"at_s", 1}, {"tenant", "a"}, {"weight", 0}}}),
            "s.json: events[0].weight: must be a number in [1e-06, 1e+06], got 0");
  EXPECT_EQ(ErrorOf({{{"type", "class_omega"}, {"at_s", 1}, {"priority", 3}, {"omega", 1}}}),
            "s.json: events[0].priority: must be an integer in [1, 2], got 3");
  EXPECT_EQ(ErrorOf({{{"type", "outside_traffic"}, {"at_s", 1}, {"share", 1}}}),
            "s.json: events[0].share: must be below 1, got 1");
  EXPECT_EQ(ErrorOf({{{"type", "upstream_limits"}, {"at_s", 1}, {"limits", json::array()}}}),
            "s.json: events[0].limits: must be a non-empty array");
  EXPECT_EQ(ErrorOf({{{"type", "upstream_limits"},
                      {"at_s", 1},
                      {"limits", {{{"dimension", "tokens"}, {"limit", 5}, {"window_s", 1}}}}}}),
            "s.json: events[0].limits: needs a \"requests\" limit (the cap C_requests)");
  // What mockapi would answer 400 to (found only when the event came, the
  // event then not applied) is refused with the file and the field.
  auto limit_error = [](json limit) {
    return ErrorOf({{{"type", "upstream_limits"}, {"at_s", 1}, {"limits", {limit}}}});
  };
  const json requests = {{"dimension", "requests"}, {"limit", 30}, {"window_s", 1}};
  json l = requests;
  l["algorithm"] = "x";
  EXPECT_EQ(limit_error(l),
            "s.json: events[0].limits[0]: algorithm must be fixed_window, sliding_window, "
            "token_bucket or quantized, got \"x\"");
  l = requests;
  l["foo"] = 1;
  EXPECT_EQ(limit_error(l), "s.json: events[0].limits[0].foo: unknown field");
  l = requests;
  l["limit"] = 0.5;
  EXPECT_EQ(limit_error(l),
            "s.json: events[0].limits[0].limit: must be an integer in [1, "
            "1125899906842624], got 0.5");
  l = requests;
  l["limit"] = 1e300;
  EXPECT_EQ(limit_error(l),
            "s.json: events[0].limits[0].limit: must be an integer in [1, "
            "1125899906842624], got 1e+300");
  l = requests;
  l["algorithm"] = "quantized";
  l["quantum_s"] = 5;
  EXPECT_EQ(
      limit_error(l).rfind("s.json: events[0].limits[0]: quantum_s must be in (0, window_s]", 0),
      0u)
      << limit_error(l);
  EXPECT_EQ(ErrorOf({{{"type", "state_outage"}, {"at_s", 1}, {"duration_s", 2}, {"mode", "nap"}}}),
            "s.json: events[0].mode: must be pause|stop, got nap");
  EXPECT_EQ(ErrorOf({{{"type", "state_outage"}, {"at_s", 10}, {"duration_s", 5}},
                     {{"type", "state_outage"}, {"at_s", 12}, {"duration_s", 1}}}),
            "s.json: events: the state_outage at 12 s starts before the one at 10 s is "
            "restored (at 15 s)");
}

TEST(ScenarioEvents, ScheduleScalesAndOrders) {
  json doc = Base();
  doc["events"] = json::parse(R"([
    {"type": "outside_traffic", "at_s": 12, "share": 0.2},
    {"type": "state_outage", "at_s": 2, "duration_s": 10},
    {"type": "tenant_weight", "at_s": 2, "tenant": "a", "weight": 2},
    {"type": "outside_traffic", "at_s": 0.001, "share": 0}
  ])");
  auto w = ParseWorkload(doc, "s.json");
  ASSERT_TRUE(w.ok()) << w.status().message();
  // speedup 4: paper s * 1e6 / 4 real us.
  auto s = ScheduleEvents(w->events, *TimeScale::Of(4));
  ASSERT_EQ(s.size(), 5u);
  EXPECT_EQ(s[0].at_us, 250);  // 0.001 s
  EXPECT_EQ(s[0].event_index, 3);
  EXPECT_EQ(s[1].at_us, 500000);  // 2 s: the outage first (file order) ...
  EXPECT_EQ(s[1].event_index, 1);
  EXPECT_EQ(s[2].at_us, 500000);  // ... then the weight
  EXPECT_EQ(s[2].event_index, 2);
  EXPECT_EQ(s[3].at_us, 3000000);  // 12 s: the outage's restore after the start at 12 s
  EXPECT_EQ(s[3].event_index, 0);
  EXPECT_EQ(s[3].phase, 0);
  EXPECT_EQ(s[4].at_us, 3000000);
  EXPECT_EQ(s[4].event_index, 1);
  EXPECT_EQ(s[4].phase, 1);
  EXPECT_EQ(ScheduleEvents(w->events, TimeScale())[4].at_us, 12000000);
}

TEST(ScenarioEvents, ShippedScenariosParseAndCoverEveryType) {
  std::set<EventType> seen;
  int files = 0;
  for (const auto& f : std::filesystem::directory_iterator(BP_SOURCE_DIR "/configs/scenarios")) {
    if (f.path().extension() != ".json") continue;
    auto w = LoadWorkload(f.path().string());
    ASSERT_TRUE(w.ok()) << w.status().message();
    EXPECT_FALSE(w->events.empty()) << f.path();
    for (const auto& e : w->events) seen.insert(e.type);
    ++files;
  }
  EXPECT_GE(files, 5);
  EXPECT_EQ(seen.size(), 7u);  // every event type
}

TEST(ScenarioEvents, AFolderIsNotAWorkloadFile) {
  // `loadgen --workload configs/scenarios` said "not valid JSON".
  const std::string dir = BP_SOURCE_DIR "/configs/scenarios";
  auto w = LoadWorkload(dir);
  ASSERT_FALSE(w.ok());
  EXPECT_EQ(w.status().message(), dir + ": is a directory, not a workload file");
  EXPECT_EQ(LoadWorkload(dir + "/missing.json").status().message(),
            dir + "/missing.json: cannot read the workload file");
}

}  // namespace
}  // namespace bp::loadgen
