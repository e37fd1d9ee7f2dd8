// Workload parsing and validation (workload.h). bp::JsonFields
// (json_fields.h) keeps every message in the form "FILE: FIELD: what is wrong".
#include "bp/loadgen/workload.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <set>

#include "bp/gate.h"
#include "bp/gate_config_json.h"
#include "bp/json_fields.h"

namespace bp::loadgen {
namespace {

using nlohmann::json;

void ParseTenant(const json& t, const std::string& path, int classes, TenantSpec* out, int* count,
                 std::string* error) {
  if (!t.is_object()) {
    *error = path + ": must be an object";
    return;
  }
  JsonFields r(t, path, error);
  r.OnlyKeys({"id", "priority", "weight", "concurrency", "workflows", "activities_per_workflow",
              "prompt_tokens", "max_tokens", "count", "stream", "stream_share", "cancel_share",
              "cancel_after_events"});
  r.Int("count", 1, 1000000, count);
  r.String("id", &out->id, Need::kRequired);
  if (error->empty() && !bp::ValidTenantName(out->id))
    r.Fail("id", "must match [A-Za-z0-9_.-]{1,128}");
  r.Int("priority", 1, classes, &out->priority, Need::kRequired);
  r.NumberIn("weight", kMinGateWeight, kMaxGateWeight, &out->weight);
  r.Int("concurrency", 1, 100000, &out->concurrency, Need::kRequired);
  r.Int("workflows", 1, 10000000, &out->workflows, Need::kRequired);
  r.Int("activities_per_workflow", 1, 100000, &out->activities_per_workflow);
  r.Int("prompt_tokens", 1, 1000000, &out->prompt_tokens, Need::kRequired);
  r.Int("max_tokens", 1, 1000000, &out->max_tokens, Need::kRequired);
  bool stream = false;
  r.Bool("stream", &stream);
  if (stream && r.Has("stream_share")) r.Fail("stream", "give stream or stream_share, not both");
  if (stream) out->stream_share = 1;
  r.NumberIn("stream_share", 0, 1, &out->stream_share);
  r.NumberIn("cancel_share", 0, 1, &out->cancel_share);
  r.Int("cancel_after_events", 1, 1000000, &out->cancel_after_events);
  if (error->empty() && out->cancel_share > 0 && out->stream_share == 0)
    r.Fail("cancel_share", "cancels streamed calls only; set stream or stream_share too");
}

// Validates the parts of the upstream section loadgen depends on and derives
// the caps; mockapi validates the rest when it is PUT.
void ParseUpstream(const json& u, UpstreamCaps* caps, std::string* error) {
  if (!u.is_object()) {
    *error = "upstream: must be an object";
    return;
  }
  JsonFields r(u, "upstream", error);
  r.OnlyKeys({"limits", "completion_tokens", "latency", "count_rejected", "token_accounting",
              "dialect", "scope", "model", "profile", "overload", "stream_disconnect"});
  if (!error->empty()) return;
  auto c = CapsOfLimits(u.contains("limits") ? u["limits"] : json(), "upstream.limits");
  if (!c.ok()) {
    *error = c.status().message();
    return;
  }
  *caps = *c;
}

}  // namespace

int64_t Workload::total_activities() const {
  int64_t n = 0;
  for (const auto& t : tenants) n += int64_t{t.workflows} * t.activities_per_workflow;
  return n;
}

bool Workload::JoinsLater(int index) const {
  for (const ScenarioEvent& e : events) {
    if (e.type == EventType::kJoin && e.tenant_index == index) return true;
  }
  return false;
}

bool Workload::Unservable(int index) const {
  if (index < 0 || static_cast<size_t>(index) >= tenants.size()) return false;
  const TenantSpec& t = tenants[static_cast<size_t>(index)];
  const double call_tokens = static_cast<double>(t.prompt_tokens + t.max_tokens);
  // A call fits a limit set when no dimension's largest call is below its cost
  // (0: the dimension has no limit).
  auto fits = [call_tokens](const UpstreamCaps& c) {
    return !(c.max_requests_per_call > 0 && c.max_requests_per_call < 1) &&
           !(c.max_tokens_per_call > 0 && c.max_tokens_per_call < call_tokens);
  };
  if (fits(caps)) return false;
  for (const ScenarioEvent& e : events) {
    if (e.type == EventType::kUpstreamLimits && fits(e.caps)) return false;
  }
  return true;
}

Result<Workload> ParseWorkload(const json& doc, const std::string& source) {
  Workload w;
  w.source = source;
  std::string error;
  auto fail = [&](const std::string& e) { return Status::InvalidArgument(source + ": " + e); };
  if (!doc.is_object()) return fail("the document must be a JSON object");
  JsonFields r(doc, "", &error);
  r.OnlyKeys({"name", "description", "tenants", "upstream", "slots", "run_length_cap_s",
              "dispatch_latency_ms", "priority_weights", "gate", "events"});
  r.String("name", &w.name, Need::kRequired);
  // The name becomes a results folder and part of a gate target.
  if (error.empty() && (!bp::ValidTenantName(w.name) || w.name == "." || w.name == "..")) {
    r.Fail("name", "must match [A-Za-z0-9_.-]{1,128}");
  }
  r.String("description", &w.description);
  r.Int("slots", 1, 100000, &w.slots, Need::kRequired);
  r.Number("run_length_cap_s", Above(0), &w.run_length_cap_s, Need::kRequired);
  // Bounded as mockapi's latency is (one hour): beyond, no call could start
  // within any run, and the run would idle to its cap with nothing to say why.
  r.Number("dispatch_latency_ms", NumberRange{0, kMaxDispatchLatencyMs}, &w.dispatch_latency_ms);
  if (!error.empty()) return fail(error);

  if (doc.contains("priority_weights")) {
    const json& pw = doc["priority_weights"];
    if (!pw.is_array() || pw.empty() || pw.size() > kMaxGateClasses) {
      return fail("priority_weights: must be an array of 1.." + std::to_string(kMaxGateClasses) +
                  " positive numbers (omega_1..omega_K)");
    }
    w.priority_weights.clear();
    for (size_t k = 0; k < pw.size(); ++k) {
      const json& v = pw[k];
      if (!v.is_number() ||
          !(v.get<double>() >= kMinGateWeight && v.get<double>() <= kMaxGateWeight)) {
        return fail("priority_weights[" + std::to_string(k) + "]: " +
                    NumberRangeText({kMinGateWeight, kMaxGateWeight}) + ", got " + v.dump());
      }
      w.priority_weights.push_back(v.get<double>());
    }
  }

  if (doc.contains("gate")) {
    const json& g = doc["gate"];
    if (!g.is_object()) return fail("gate: must be an object");
    JsonFields gr(g, "gate", &error);
    gr.OnlyKeys({"mode", "burst_s", "cap_factor", "adapt", "adapt_beta", "adapt_recover_s",
                 "adapt_window_s", "adapt_min_429", "adapt_headers", "queue_ttl_s", "share_rule",
                 "class_policy"});
    std::string mode = "reconcile";
    gr.String("mode", &mode);
    gr.Number("burst_s", Above(0), &w.gate_burst_s);
    // At most a day: the gate takes it as whole milliseconds (int64), and a
    // TTL beyond int64 milliseconds would wrap to the 100 ms floor.
    gr.Number("queue_ttl_s", NumberRange{kMinQueueTtlS, kMaxQueueTtlS}, &w.gate_queue_ttl_s);
    gr.Number("cap_factor", Above(0), &w.gate_cap_factor);
    gr.Bool("adapt", &w.gate_adapt);
    gr.Bool("adapt_headers", &w.gate_adapt_headers);
    gr.Number("adapt_beta", kGateAdaptBetaRange, &w.gate_adapt_beta);
    gr.Number("adapt_recover_s", Above(0), &w.gate_adapt_recover_s);
    gr.Number("adapt_window_s", AtLeast(0), &w.gate_adapt_window_s);
    gr.Int("adapt_min_429", 1, 1000000, &w.gate_adapt_min_429);
    gr.Enum("share_rule", &w.gate_flat_share, {"hier", "flat"});
    gr.Enum("class_policy", &w.gate_strict_classes, {"fair", "strict"});
    if (!error.empty()) return fail(error);
    const auto m = ParseGateMode(mode);
    if (!m) return fail(std::string("gate.mode: must be ") + kGateModeNames + ", got " + mode);
    w.gate_mode = *m;
  }

  if (!doc.contains("tenants") || !doc["tenants"].is_array() || doc["tenants"].empty()) {
    return fail("tenants: must be a non-empty array");
  }
  std::set<std::string> ids;
  for (size_t i = 0; i < doc["tenants"].size(); ++i) {
    TenantSpec t;
    std::string path = "tenants[" + std::to_string(i) + "]";
    int count = 0;  // absent: one tenant named id; N: N tenants id-0 .. id-(N-1)
    ParseTenant(doc["tenants"][i], path, w.priority_classes(), &t, &count, &error);
    if (!error.empty()) return fail(error);
    if (count > 0 && t.id.size() + 1 + std::to_string(count - 1).size() > 128) {
      return fail(path + ".id: too long for count " + std::to_string(count) + " (id-N > 128)");
    }
    for (int k = 0; k < std::max(count, 1); ++k) {
      TenantSpec one = t;
      if (count > 0) one.id += "-" + std::to_string(k);
      if (!ids.insert(one.id).second) return fail(path + ".id: duplicate tenant id " + one.id);
      w.tenants.push_back(std::move(one));
    }
  }

  if (!doc.contains("upstream")) return fail("upstream: missing (required)");
  ParseUpstream(doc["upstream"], &w.caps, &error);
  if (!error.empty()) return fail(error);
  w.upstream = doc["upstream"];
  // The gate caps a bp run derives are checked once, at the run's speedup,
  // by loadgen's plan (CheckGateRanges): they depend on it, and a run
  // without bp never derives them.
  if (doc.contains("events")) {
    auto events = ParseEvents(doc["events"], w.tenants, w.priority_classes(), w.run_length_cap_s);
    if (!events.ok()) return fail(events.status().message());
    w.events = std::move(*events);
  }
  return w;
}

Result<Workload> LoadWorkload(const std::string& path) {
  auto doc = ReadJsonFile(path, "workload");
  if (!doc.ok()) return doc.status();
  return ParseWorkload(*doc, path);
}

}  // namespace bp::loadgen
