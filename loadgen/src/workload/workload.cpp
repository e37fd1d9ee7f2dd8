// Workload parsing and validation (workload.h). A small field reader keeps
// every message in the form "FILE: FIELD: what is wrong".
#include "bp/loadgen/workload.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>

#include "bp/gate.h"
#include "bp/gate_config_json.h"
#include "bp/json_text.h"
#include "field_reader.h"

namespace bp::loadgen {
namespace {

using nlohmann::json;

using internal::FieldReader;

void ParseTenant(const json& t, const std::string& path, int classes, TenantSpec* out, int* count,
                 std::string* error) {
  if (!t.is_object()) {
    *error = path + ": must be an object";
    return;
  }
  FieldReader r(t, path, error);
  r.OnlyKeys({"id", "priority", "weight", "concurrency", "workflows", "activities_per_workflow",
              "prompt_tokens", "max_tokens", "count", "stream", "stream_share", "cancel_share",
              "cancel_after_events"});
  r.Int("count", 1, 1000000, count, false);
  r.String("id", &out->id, true);
  if (error->empty() && !bp::ValidTenantName(out->id))
    r.Fail("id", "must match [A-Za-z0-9_.-]{1,128}");
  r.Int("priority", 1, classes, &out->priority, true);
  r.NumberIn("weight", kMinGateWeight, kMaxGateWeight, &out->weight, false);
  r.Int("concurrency", 1, 100000, &out->concurrency, true);
  r.Int("workflows", 1, 10000000, &out->workflows, true);
  r.Int("activities_per_workflow", 1, 100000, &out->activities_per_workflow, false);
  r.Int("prompt_tokens", 1, 1000000, &out->prompt_tokens, true);
  r.Int("max_tokens", 1, 1000000, &out->max_tokens, true);
  bool stream = false;
  r.Bool("stream", &stream);
  if (stream && r.Has("stream_share")) r.Fail("stream", "give stream or stream_share, not both");
  if (stream) out->stream_share = 1;
  r.NumberIn("stream_share", 0, 1, &out->stream_share, false);
  r.NumberIn("cancel_share", 0, 1, &out->cancel_share, false);
  r.Int("cancel_after_events", 1, 1000000, &out->cancel_after_events, false);
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
  FieldReader r(u, "upstream", error);
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
  FieldReader r(doc, "", &error);
  r.OnlyKeys({"name", "description", "tenants", "upstream", "slots", "run_length_cap_s",
              "dispatch_latency_ms", "priority_weights", "gate", "events"});
  r.String("name", &w.name, true);
  // The name becomes a results folder and part of a gate target.
  if (error.empty() && (!bp::ValidTenantName(w.name) || w.name == "." || w.name == "..")) {
    r.Fail("name", "must match [A-Za-z0-9_.-]{1,128}");
  }
  r.String("description", &w.description, false);
  r.Int("slots", 1, 100000, &w.slots, true);
  r.Number("run_length_cap_s", 0, false, &w.run_length_cap_s, true);
  // Bounded as mockapi's latency is (one hour): beyond, no call could start
  // within any run, and the run would idle to its cap with nothing to say why.
  r.NumberIn("dispatch_latency_ms", 0, kMaxDispatchLatencyMs, &w.dispatch_latency_ms, false);
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
                    FieldReader::RangeText(kMinGateWeight, kMaxGateWeight) + ", got " + v.dump());
      }
      w.priority_weights.push_back(v.get<double>());
    }
  }

  if (doc.contains("gate")) {
    const json& g = doc["gate"];
    if (!g.is_object()) return fail("gate: must be an object");
    FieldReader gr(g, "gate", &error);
    gr.OnlyKeys({"mode", "burst_s", "cap_factor", "adapt", "adapt_beta", "adapt_recover_s",
                 "adapt_window_s", "adapt_min_429", "adapt_headers", "queue_ttl_s", "share_rule",
                 "class_policy"});
    std::string mode = "reconcile";
    gr.String("mode", &mode, false);
    gr.Number("burst_s", 0, false, &w.gate_burst_s, false);
    // At most a day: the gate takes it as whole milliseconds (int64), and a
    // TTL beyond int64 milliseconds would wrap to the 100 ms floor.
    gr.NumberIn("queue_ttl_s", kMinQueueTtlS, kMaxQueueTtlS, &w.gate_queue_ttl_s, false);
    gr.Number("cap_factor", 0, false, &w.gate_cap_factor, false);
    if (g.contains("adapt") && !g["adapt"].is_boolean()) gr.Fail("adapt", "must be true or false");
    if (g.contains("adapt") && g["adapt"].is_boolean()) w.gate_adapt = g["adapt"].get<bool>();
    if (g.contains("adapt_headers") && !g["adapt_headers"].is_boolean()) {
      gr.Fail("adapt_headers", "must be true or false");
    }
    if (g.contains("adapt_headers") && g["adapt_headers"].is_boolean()) {
      w.gate_adapt_headers = g["adapt_headers"].get<bool>();
    }
    gr.Number("adapt_beta", 0, false, &w.gate_adapt_beta, false);
    if (error.empty() && w.gate_adapt_beta >= 1) gr.Fail("adapt_beta", "must be in (0, 1)");
    gr.Number("adapt_recover_s", 0, false, &w.gate_adapt_recover_s, false);
    gr.Number("adapt_window_s", 0, true, &w.gate_adapt_window_s, false);
    gr.Int("adapt_min_429", 1, 1000000, &w.gate_adapt_min_429, false);
    std::string share_rule = "hier", class_policy = "fair";
    gr.String("share_rule", &share_rule, false);
    gr.String("class_policy", &class_policy, false);
    if (error.empty() && share_rule != "hier" && share_rule != "flat") {
      gr.Fail("share_rule", "must be hier or flat, got " + share_rule);
    }
    if (error.empty() && class_policy != "fair" && class_policy != "strict") {
      gr.Fail("class_policy", "must be fair or strict, got " + class_policy);
    }
    w.gate_flat_share = share_rule == "flat";
    w.gate_strict_classes = class_policy == "strict";
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
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec)) {
    return Status::NotFound(path + ": is a directory, not a workload file");
  }
  std::ifstream in(path);
  if (!in) return Status::NotFound(path + ": cannot read the workload file");
  std::stringstream text;
  text << in.rdbuf();
  json doc = json::parse(text.str(), nullptr, /*allow_exceptions=*/false);
  if (doc.is_discarded()) return Status::InvalidArgument(path + ": " + JsonSyntaxError(text.str()));
  return ParseWorkload(doc, path);
}

}  // namespace bp::loadgen
