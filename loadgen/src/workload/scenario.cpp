// Scenario events: parsing, validation and the schedule of a run (scenario.h).
#include "bp/loadgen/scenario.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <set>

#include "bp/decimal.h"
#include "bp/json_fields.h"
#include "bp/limit_json.h"
#include "bp/limiter.h"
#include "bp/loadgen/workload.h"

namespace bp::loadgen {
namespace {

using nlohmann::json;

const std::map<std::string, EventType>& TypeNames() {
  static const std::map<std::string, EventType> names = {
      {"join", EventType::kJoin},
      {"leave", EventType::kLeave},
      {"upstream_limits", EventType::kUpstreamLimits},
      {"tenant_weight", EventType::kTenantWeight},
      {"class_omega", EventType::kClassOmega},
      {"outside_traffic", EventType::kOutsideTraffic},
      {"state_outage", EventType::kStateOutage},
  };
  return names;
}

// Fields each type accepts besides the common ones.
std::set<std::string> KeysOf(EventType type) {
  std::set<std::string> keys = {"type", "at_s", "label", "window_s", "settle_s"};
  switch (type) {
    case EventType::kJoin:
    case EventType::kLeave:
      keys.insert("tenant");
      break;
    case EventType::kTenantWeight:
      keys.insert({"tenant", "weight"});
      break;
    case EventType::kClassOmega:
      keys.insert({"priority", "omega"});
      break;
    case EventType::kUpstreamLimits:
      keys.insert("limits");
      break;
    case EventType::kOutsideTraffic:
      keys.insert({"share", "prompt_tokens", "max_tokens"});
      break;
    case EventType::kStateOutage:
      keys.insert({"duration_s", "mode"});
      break;
  }
  return keys;
}

}  // namespace

const char* EventTypeName(EventType type) {
  for (const auto& [name, t] : TypeNames()) {
    if (t == type) return name.c_str();
  }
  return "?";
}

Result<UpstreamCaps> CapsOfLimits(const json& limits, const std::string& path) {
  if (!limits.is_array() || limits.empty()) {
    return Status::InvalidArgument(path + ": must be a non-empty array");
  }
  // mockapi's own reader (bp/limit_json.h): what mockapi would refuse (a 400
  // to loadgen's PUT, found only when the run or the event comes) is refused
  // here, with the file, the field and mockapi's reason.
  auto options = LimitsFromJson(limits, path, LimitFields::kRequireDimensionLimitWindow);
  if (!options.ok()) return options.status();
  UpstreamCaps caps;
  for (const LimiterOptions& o : *options) {
    // The largest single cost this limit ever admits (mockapi's capacity()).
    auto limiter = MakeLimiter(o);
    if (!limiter.ok()) return limiter.status();  // validated above; kept for safety
    const double capacity = static_cast<double>((*limiter)->capacity());
    auto least = [capacity](double* max) { *max = *max > 0 ? std::min(*max, capacity) : capacity; };
    const double rate = static_cast<double>(o.limit) / o.window_s;
    if (o.dimension == Dimension::kRequests) {
      caps.requests_per_s += rate;
      least(&caps.max_requests_per_call);
    } else if (o.dimension == Dimension::kTokens) {
      caps.tokens_per_s += rate;
      least(&caps.max_tokens_per_call);
    }
  }
  if (caps.requests_per_s <= 0) {
    return Status::InvalidArgument(path + ": needs a \"requests\" limit (the cap C_requests)");
  }
  return caps;
}

Result<std::vector<ScenarioEvent>> ParseEvents(const json& events,
                                               const std::vector<TenantSpec>& tenants,
                                               int priority_classes, double run_length_cap_s) {
  if (!events.is_array()) return Status::InvalidArgument("events: must be an array");
  std::vector<ScenarioEvent> out;
  std::map<std::string, double> joined_at, left_at;
  for (size_t i = 0; i < events.size(); ++i) {
    const std::string path = "events[" + std::to_string(i) + "]";
    const json& e = events[i];
    if (!e.is_object()) return Status::InvalidArgument(path + ": must be an object");
    JsonFields r(e, path);
    ScenarioEvent ev;
    std::string type;
    r.String("type", &type, Need::kRequired);
    if (!r.ok()) return Status::InvalidArgument(r.error());
    auto it = TypeNames().find(type);
    if (it == TypeNames().end()) {
      return Status::InvalidArgument(path +
                                     ".type: must be join|leave|upstream_limits|tenant_weight|"
                                     "class_omega|outside_traffic|state_outage, got " +
                                     type);
    }
    ev.type = it->second;
    r.OnlyKeys(KeysOf(ev.type), " for type " + type);
    r.Number("at_s", AtLeast(0), &ev.at_s, Need::kRequired);
    if (r.ok() && ev.at_s >= run_length_cap_s) {
      r.Fail("at_s", "must be before the run length cap (" + FormatShort(run_length_cap_s) +
                         " s), got " + FormatShort(ev.at_s));
    }
    r.String("label", &ev.label);
    r.Number("window_s", Above(0), &ev.window_s);
    r.Number("settle_s", AtLeast(0), &ev.settle_s);
    if (!r.ok()) return Status::InvalidArgument(r.error());

    switch (ev.type) {
      case EventType::kJoin:
      case EventType::kLeave:
      case EventType::kTenantWeight: {
        r.String("tenant", &ev.tenant, Need::kRequired);
        if (!r.ok()) return Status::InvalidArgument(r.error());
        for (size_t t = 0; t < tenants.size(); ++t) {
          if (tenants[t].id == ev.tenant) ev.tenant_index = static_cast<int>(t);
        }
        if (ev.tenant_index < 0) r.Fail("tenant", "no tenant with id " + ev.tenant);
        if (ev.type == EventType::kTenantWeight)
          r.NumberIn("weight", kMinGateWeight, kMaxGateWeight, &ev.weight, Need::kRequired);
        if (r.ok() && ev.type == EventType::kJoin) {
          if (joined_at.count(ev.tenant)) r.Fail("tenant", ev.tenant + " already joins earlier");
          joined_at[ev.tenant] = ev.at_s;
        }
        if (r.ok() && ev.type == EventType::kLeave) {
          if (left_at.count(ev.tenant)) r.Fail("tenant", ev.tenant + " already leaves earlier");
          auto j = joined_at.find(ev.tenant);
          if (j != joined_at.end() && j->second >= ev.at_s) {
            r.Fail("at_s",
                   ev.tenant + " must leave after it joins (at " + FormatShort(j->second) + " s)");
          }
          left_at[ev.tenant] = ev.at_s;
        }
        break;
      }
      case EventType::kClassOmega: {
        int64_t k = 0;
        r.Int("priority", 1, priority_classes, &k, Need::kRequired);
        ev.priority = static_cast<int>(k);
        r.NumberIn("omega", kMinGateWeight, kMaxGateWeight, &ev.omega, Need::kRequired);
        break;
      }
      case EventType::kUpstreamLimits: {
        if (!e.contains("limits")) {
          r.Fail("limits", "missing (required)");
          break;
        }
        auto caps = CapsOfLimits(e["limits"], path + ".limits");
        if (!caps.ok()) return caps.status();
        ev.caps = *caps;
        ev.limits = e["limits"];
        break;
      }
      case EventType::kOutsideTraffic: {
        r.Number("share", AtLeast(0), &ev.share, Need::kRequired);
        if (r.ok() && ev.share >= 1)
          r.Fail("share", "must be below 1, got " + FormatShort(ev.share));
        r.Int("prompt_tokens", 1, 1000000, &ev.prompt_tokens);
        r.Int("max_tokens", 1, 1000000, &ev.max_tokens);
        break;
      }
      case EventType::kStateOutage: {
        r.Number("duration_s", Above(0), &ev.duration_s, Need::kRequired);
        std::string mode = "pause";
        r.String("mode", &mode);
        if (r.ok() && mode == "stop") ev.mode = OutageMode::kStop;
        if (r.ok() && mode != "stop" && mode != "pause") {
          r.Fail("mode", "must be pause|stop, got " + mode);
        }
        break;
      }
    }
    if (!r.ok()) return Status::InvalidArgument(r.error());
    out.push_back(std::move(ev));
  }
  // Leaving a tenant that joins after the leave is caught above only in file
  // order; check it for any order.
  for (const auto& [tenant, at] : left_at) {
    auto j = joined_at.find(tenant);
    if (j != joined_at.end() && j->second >= at) {
      return Status::InvalidArgument("events: " + tenant + " leaves at " + FormatShort(at) +
                                     " s, not after it joins at " + FormatShort(j->second) + " s");
    }
  }
  // State outages must not overlap (one server, one outage at a time).
  std::vector<std::pair<double, double>> outages;
  for (const ScenarioEvent& ev : out) {
    if (ev.type == EventType::kStateOutage) outages.push_back({ev.at_s, ev.at_s + ev.duration_s});
  }
  std::sort(outages.begin(), outages.end());
  for (size_t i = 1; i < outages.size(); ++i) {
    if (outages[i].first < outages[i - 1].second) {
      return Status::InvalidArgument(
          "events: the state_outage at " + FormatShort(outages[i].first) +
          " s starts before the one at " + FormatShort(outages[i - 1].first) +
          " s is restored (at " + FormatShort(outages[i - 1].second) + " s)");
    }
  }
  return out;
}

std::vector<ScheduledAction> ScheduleEvents(const std::vector<ScenarioEvent>& events,
                                            const TimeScale& scale) {
  auto us = [&scale](double paper_s) { return std::llround(scale.ToReal(paper_s * 1e6)); };
  std::vector<ScheduledAction> actions;
  for (size_t i = 0; i < events.size(); ++i) {
    const ScenarioEvent& e = events[i];
    actions.push_back({us(e.at_s), static_cast<int>(i), 0});
    if (e.type == EventType::kStateOutage) {
      actions.push_back({us(e.at_s + e.duration_s), static_cast<int>(i), 1});
    }
  }
  std::stable_sort(actions.begin(), actions.end(),
                   [](const ScheduledAction& a, const ScheduledAction& b) {
                     if (a.at_us != b.at_us) return a.at_us < b.at_us;
                     return a.phase < b.phase;
                   });
  return actions;
}

std::string EventText(const ScenarioEvent& e) {
  if (!e.label.empty()) return e.label;
  switch (e.type) {
    case EventType::kJoin:
      return "join " + e.tenant;
    case EventType::kLeave:
      return "leave " + e.tenant;
    case EventType::kTenantWeight:
      return "weight " + e.tenant + " = " + FormatShort(e.weight);
    case EventType::kClassOmega:
      return "omega P" + std::to_string(e.priority) + " = " + FormatShort(e.omega);
    case EventType::kUpstreamLimits: {
      std::string s = "upstream limits: " + FormatShort(e.caps.requests_per_s) + " req/s";
      if (e.caps.tokens_per_s > 0) s += ", " + FormatShort(e.caps.tokens_per_s) + " tok/s";
      return s;
    }
    case EventType::kOutsideTraffic:
      return e.share > 0 ? "outside traffic " + FormatShort(100 * e.share) + " % of the cap"
                         : "outside traffic stops";
    case EventType::kStateOutage:
      return std::string("valkey ") + (e.mode == OutageMode::kPause ? "paused" : "stopped") +
             " for " + FormatShort(e.duration_s) + " s";
  }
  return "?";
}

}  // namespace bp::loadgen
