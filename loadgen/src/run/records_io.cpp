// Records files (records_io.h): RunRecords as compact JSON and back. Read
// through bp::ReadJsonFile and the field reader's wording (json_fields.h):
// "FILE: FIELD: must be an integer in [lo, hi], got V".
#include "bp/loadgen/records_io.h"

#include <fstream>
#include <limits>
#include <nlohmann/json.hpp>
#include <stdexcept>
#include <string>
#include <type_traits>

#include "bp/json_fields.h"

namespace bp::loadgen {
namespace {

using nlohmann::json;
constexpr const char* kFormat = "bp-loadgen-records/1";
// A run's end, us after its start: at most 365 days (a run is capped by its
// workload's run_length_cap_s; 1e18 was taken as a 31 700-year run).
constexpr int64_t kMaxEndUs = 365LL * 86400 * 1'000'000;
constexpr int64_t kMaxSlots = 100000;  // the workload reader's range for "slots"

int VerdictNumber(GateVerdict v) { return static_cast<int>(v); }

json AttemptsJson(const std::vector<AttemptRecord>& v) {
  json a = json::array();
  for (const AttemptRecord& r : v) {
    json row = {r.activity_id, r.tenant_index, r.send_us, r.done_us,
                r.status,      r.proxy_local,  r.bound,   r.tokens};
    if (r.stream != 0) {  // streamed calls only: plain runs' files keep their size
      row.push_back(r.stream);
      row.push_back(r.ttft_us);
      row.push_back(r.itl_us);
      row.push_back(r.token_events);
    }
    a.push_back(std::move(row));
  }
  return a;
}

// A whole number of type T: nlohmann's get<T>() on 1e300 or 1.5 converts
// out of range (undefined behaviour) or truncates, so a records file with
// such a value is refused instead.
template <typename T>
T Whole(const json& v) {
  constexpr int64_t kMin = std::numeric_limits<T>::min(), kMax = std::numeric_limits<T>::max();
  if (!JsonIntIn(v, kMin, kMax))
    throw std::invalid_argument(IntRangeText(kMin, kMax) + ", got " + v.dump());
  return static_cast<T>(v.get<int64_t>());
}

// Reads the items of one array field, each an array of at least `width`
// values; `field` names it in errors (the caller's catch adds the file).
template <typename Fn>
void ForRows(const json& doc, const char* field, size_t width, std::string* where, Fn fn) {
  *where = field;
  const json& rows = doc.at(field);
  if (!rows.is_array()) throw std::invalid_argument("not an array");
  for (size_t i = 0; i < rows.size(); ++i) {
    *where = std::string(field) + "[" + std::to_string(i) + "]";
    const json& row = rows[i];
    if (!row.is_array() || row.size() < width) {
      throw std::invalid_argument("must be an array of " + std::to_string(width) + " values");
    }
    fn(row);
  }
}

std::vector<AttemptRecord> AttemptsOf(const json& doc, const char* field, std::string* where) {
  std::vector<AttemptRecord> out;
  ForRows(doc, field, 7, where, [&](const json& r) {
    AttemptRecord a;
    a.activity_id = Whole<int64_t>(r[0]);
    a.tenant_index = Whole<int>(r[1]);
    a.send_us = Whole<int64_t>(r[2]);
    a.done_us = Whole<int64_t>(r[3]);
    a.status = Whole<int>(r[4]);
    a.proxy_local = r[5].get<bool>();
    a.bound = r[6].get<std::string>();
    if (r.size() > 7) a.tokens = Whole<int64_t>(r[7]);  // parts written without it: 0
    if (r.size() > 10) {
      a.stream = Whole<int>(r[8]);
      a.ttft_us = Whole<int64_t>(r[9]);
      a.itl_us = Whole<int64_t>(r[10]);
      if (a.stream < 0 || a.stream > 2) throw std::invalid_argument("stream must be 0, 1 or 2");
    }
    if (r.size() > 11) {
      a.token_events = Whole<int64_t>(r[11]);
      if (a.token_events < 0) throw std::invalid_argument("token_events must be >= 0");
    }
    out.push_back(std::move(a));
  });
  return out;
}

// "rows[i].field: v names no what (the part has n: 0..n-1)" unless v is in
// [0, n) (or -1 when minus_one_ok); "" when it is.
std::string BadRef(const char* rows, size_t i, const char* field, int64_t v, size_t n,
                   const char* what, bool minus_one_ok = false) {
  if ((v >= 0 && static_cast<uint64_t>(v) < n) || (minus_one_ok && v == -1)) return "";
  std::string has = std::to_string(n);
  if (n > 0) has += ": 0.." + std::to_string(n - 1);
  return std::string(rows) + "[" + std::to_string(i) + "]." + field + ": " + std::to_string(v) +
         " names no " + what + " (the part has " + has + ")";
}

}  // namespace

Status ValidateRecords(const RunRecords& r) {
  const size_t tenants = r.tenants.size(), activities = r.activities.size(),
               workflows = r.workflows.size();
  std::string e;
  auto first = [&e](std::string m) {
    if (e.empty()) e = std::move(m);
  };
  // Row i of "workflows" or "activities": id i, tenant_index a tenant.
  auto row_ids = [&](const char* rows, const auto& v) {
    for (size_t i = 0; i < v.size() && e.empty(); ++i) {
      if (v[i].id != static_cast<int64_t>(i)) {
        first(std::string(rows) + "[" + std::to_string(i) + "].id: " + std::to_string(v[i].id) +
              ", expected " + std::to_string(i) + " (ids are the row numbers)");
      }
      first(BadRef(rows, i, "tenant_index", v[i].tenant_index, tenants, "tenant"));
    }
  };
  row_ids("workflows", r.workflows);
  row_ids("activities", r.activities);
  for (size_t i = 0; i < activities && e.empty(); ++i) {
    first(
        BadRef("activities", i, "workflow_id", r.activities[i].workflow_id, workflows, "workflow"));
  }
  for (auto [rows, v] :
       {std::pair{"attempts", &r.attempts}, std::pair{"outside_attempts", &r.outside_attempts}}) {
    for (size_t i = 0; i < v->size() && e.empty(); ++i) {
      const AttemptRecord& a = (*v)[i];
      first(BadRef(rows, i, "activity_id", a.activity_id, activities, "activity", true));
      first(BadRef(rows, i, "tenant_index", a.tenant_index, tenants, "tenant", true));
    }
  }
  auto activity_and_tenant = [&](const char* rows, const auto& v) {
    for (size_t i = 0; i < v.size() && e.empty(); ++i) {
      first(BadRef(rows, i, "activity_id", v[i].activity_id, activities, "activity"));
      first(BadRef(rows, i, "tenant_index", v[i].tenant_index, tenants, "tenant"));
    }
  };
  activity_and_tenant("slots_held", r.slots_held);
  activity_and_tenant("deferrals", r.deferrals);
  for (size_t i = 0; i < r.gate_decisions.size() && e.empty(); ++i) {
    first(BadRef("gate_decisions", i, "tenant_index", r.gate_decisions[i].tenant_index, tenants,
                 "tenant"));
  }
  return e.empty() ? Status::Ok() : Status::InvalidArgument(e);
}

Status WriteRecordsFile(const std::filesystem::path& path, const ShardRecords& part) {
  const RunRecords& r = part.records;
  json doc;
  doc["format"] = kFormat;
  doc["workload"] = r.workload;
  doc["configuration"] = r.configuration;
  doc["repeat"] = r.repeat;
  doc["speedup"] = r.speedup;
  doc["cap_requests_per_s"] = r.cap_requests_per_s;
  doc["cap_tokens_per_s"] = r.cap_tokens_per_s;
  doc["slots"] = r.slots;
  doc["end_us"] = r.end_us;
  doc["start_unix_us"] = r.start_unix_us;
  doc["gate_fail_opens"] = r.gate_fail_opens;
  doc["gate_breaker_opens"] = r.gate_breaker_opens;
  doc["gate_fail_opens_unreachable"] = r.gate_fail_opens_unreachable;
  doc["gate_fail_opens_timed_out"] = r.gate_fail_opens_timed_out;
  doc["gate_fail_opens_unconfigured"] = r.gate_fail_opens_unconfigured;
  doc["gate_fail_opens_server_error"] = r.gate_fail_opens_server_error;
  doc["gate_reseeds"] = r.gate_reseeds;
  doc["gate_admits_ahead"] = r.gate_admits_ahead;
  doc["gate_start_in_us"] = r.gate_start_in_us;
  doc["gate_release_errors"] = r.gate_release_errors;
  doc["gate_unreleased"] = r.gate_unreleased;
  doc["gate_target"] = r.gate_target;
  doc["gate_server"] = r.gate_server;
  doc["shard"] = {{"index", part.shard.index},
                  {"count", part.shard.count},
                  {"tenants_total", part.shard.tenants_total},
                  {"tenant_indices", part.shard.tenant_indices}};
  json& tenants = doc["tenants"] = json::array();
  for (const TenantInfo& t : r.tenants) {
    tenants.push_back({t.id, t.priority, t.weight, t.priority_weight, t.total_activities,
                       t.start_us, t.finish_us, t.join_us, t.leave_us, t.unservable});
  }
  json& activities = doc["activities"] = json::array();
  for (const ActivityRecord& a : r.activities) {
    activities.push_back({a.id, a.workflow_id, a.tenant_index, a.scheduled_us, a.first_send_us,
                          a.final_answer_us, a.completed_us, a.ok, a.slot_held_us, a.in_activity_us,
                          a.executions, a.http_attempts, a.deferrals, a.throttle_defers,
                          a.prompt_tokens, a.completion_tokens, a.fail_cause, a.cancelled});
  }
  doc["attempts"] = AttemptsJson(r.attempts);
  doc["outside_attempts"] = AttemptsJson(r.outside_attempts);
  json& slots = doc["slots_held"] = json::array();
  for (const SlotInterval& s : r.slots_held) {
    slots.push_back({s.activity_id, s.tenant_index, s.acquire_us, s.release_us});
  }
  json& workflows = doc["workflows"] = json::array();
  for (const WorkflowRecord& w : r.workflows) {
    workflows.push_back({w.id, w.tenant_index, w.start_us, w.end_us});
  }
  json& events = doc["events"] = json::array();
  for (const EventRecord& e : r.events) {
    events.push_back({e.event_index, e.phase, e.scheduled_us, e.at_us, e.applied, e.detail});
  }
  json& decisions = doc["gate_decisions"] = json::array();
  for (const GateDecisionRecord& d : r.gate_decisions) {
    decisions.push_back({d.at_us, d.tenant_index, VerdictNumber(d.verdict), d.latency_us});
  }
  json& deferrals = doc["deferrals"] = json::array();
  for (const DeferralRecord& d : r.deferrals) {
    deferrals.push_back({d.activity_id, d.tenant_index, d.at_us, d.delay_us, d.cause});
  }

  std::error_code ec;
  if (path.has_parent_path()) std::filesystem::create_directories(path.parent_path(), ec);
  if (ec)
    return Status::Internal("cannot create " + path.parent_path().string() + ": " + ec.message());
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  if (!out) return Status::Internal("cannot open " + path.string() + " for writing");
  out << doc.dump() << '\n';
  out.close();
  if (!out) return Status::Internal("cannot write " + path.string());
  return Status::Ok();
}

Result<ShardRecords> ReadRecordsFile(const std::filesystem::path& path) {
  auto read = ReadJsonFile(path.string(), "records");
  if (!read.ok()) return read.status();
  const json& doc = *read;
  std::string where = "format";
  ShardRecords part;
  RunRecords& r = part.records;
  try {
    if (!doc.is_object() || doc.value("format", std::string()) != kFormat) {
      throw std::invalid_argument(std::string("must be \"") + kFormat + "\"");
    }
    auto get = [&](const char* field, auto* out) {
      where = field;
      using T = std::decay_t<decltype(*out)>;
      if constexpr (std::is_integral_v<T> && !std::is_same_v<T, bool>) {
        *out = Whole<T>(doc.at(field));
      } else {
        *out = doc.at(field).get<T>();
      }
    };
    get("workload", &r.workload);
    get("configuration", &r.configuration);
    get("repeat", &r.repeat);
    get("speedup", &r.speedup);
    get("cap_requests_per_s", &r.cap_requests_per_s);
    get("cap_tokens_per_s", &r.cap_tokens_per_s);
    // Checked, not converted: nlohmann turns -7 into 2^64 - 7 for a count
    // and 1.5 into 1, and the merged summary.json would show both.
    auto integer = [&](const char* field, int64_t lo, int64_t hi, const char* note) -> int64_t {
      where = field;
      const json& v = doc.at(field);
      if (!JsonIntIn(v, lo, hi)) {
        throw std::invalid_argument(IntRangeText(lo, hi) + note + ", got " + v.dump());
      }
      return v.get<int64_t>();
    };
    auto count = [&](const char* field, uint64_t* out) {
      where = field;
      const json& v = doc.at(field);
      if (!v.is_number_unsigned()) {
        throw std::invalid_argument("must be a whole count >= 0, got " + v.dump());
      }
      *out = v.get<uint64_t>();
    };
    r.slots = static_cast<int>(integer("slots", 1, kMaxSlots, ""));
    r.end_us = integer("end_us", 0, kMaxEndUs, " (us after the run's start)");
    get("start_unix_us", &r.start_unix_us);
    count("gate_fail_opens", &r.gate_fail_opens);
    // Absent from records written before the breaker and the release drain.
    if (doc.contains("gate_breaker_opens")) count("gate_breaker_opens", &r.gate_breaker_opens);
    if (doc.contains("gate_unreleased")) count("gate_unreleased", &r.gate_unreleased);
    // Absent from records written before fail-opens were counted by cause.
    for (auto [field, out] :
         {std::pair{"gate_fail_opens_unreachable", &r.gate_fail_opens_unreachable},
          std::pair{"gate_fail_opens_timed_out", &r.gate_fail_opens_timed_out},
          std::pair{"gate_fail_opens_unconfigured", &r.gate_fail_opens_unconfigured},
          std::pair{"gate_fail_opens_server_error", &r.gate_fail_opens_server_error},
          std::pair{"gate_reseeds", &r.gate_reseeds},
          std::pair{"gate_admits_ahead", &r.gate_admits_ahead},
          std::pair{"gate_release_errors", &r.gate_release_errors}}) {
      if (doc.contains(field)) count(field, out);
    }
    if (doc.contains("gate_start_in_us")) {
      r.gate_start_in_us = integer("gate_start_in_us", 0, INT64_MAX, " (real us, summed)");
    }
    get("gate_target", &r.gate_target);
    if (doc.contains("gate_server")) get("gate_server", &r.gate_server);
    where = "shard";
    const json& sh = doc.at("shard");
    part.shard.index = Whole<int>(sh.at("index"));
    part.shard.count = Whole<int>(sh.at("count"));
    part.shard.tenants_total = Whole<int>(sh.at("tenants_total"));
    const json& indices = sh.at("tenant_indices");
    if (!indices.is_array()) throw std::invalid_argument("tenant_indices: not an array");
    for (const json& i : indices) part.shard.tenant_indices.push_back(Whole<int>(i));
    ForRows(doc, "tenants", 9, &where, [&](const json& t) {
      TenantInfo i;
      i.id = t[0].get<std::string>();
      i.priority = Whole<int>(t[1]);
      i.weight = t[2].get<double>();
      i.priority_weight = t[3].get<double>();
      i.total_activities = Whole<int64_t>(t[4]);
      i.start_us = Whole<int64_t>(t[5]);
      i.finish_us = Whole<int64_t>(t[6]);
      i.join_us = Whole<int64_t>(t[7]);
      i.leave_us = Whole<int64_t>(t[8]);
      if (t.size() > 9) i.unservable = t[9].get<bool>();  // parts written without it: false
      r.tenants.push_back(std::move(i));
    });
    ForRows(doc, "activities", 18, &where, [&](const json& a) {
      ActivityRecord x;
      x.id = Whole<int64_t>(a[0]);
      x.workflow_id = Whole<int64_t>(a[1]);
      x.tenant_index = Whole<int>(a[2]);
      x.scheduled_us = Whole<int64_t>(a[3]);
      x.first_send_us = Whole<int64_t>(a[4]);
      x.final_answer_us = Whole<int64_t>(a[5]);
      x.completed_us = Whole<int64_t>(a[6]);
      x.ok = a[7].get<bool>();
      x.slot_held_us = Whole<int64_t>(a[8]);
      x.in_activity_us = Whole<int64_t>(a[9]);
      x.executions = Whole<int>(a[10]);
      x.http_attempts = Whole<int>(a[11]);
      x.deferrals = Whole<int>(a[12]);
      x.throttle_defers = Whole<int>(a[13]);
      x.prompt_tokens = Whole<int64_t>(a[14]);
      x.completion_tokens = Whole<int64_t>(a[15]);
      x.fail_cause = a[16].get<std::string>();
      x.cancelled = a[17].get<bool>();
      r.activities.push_back(std::move(x));
    });
    r.attempts = AttemptsOf(doc, "attempts", &where);
    r.outside_attempts = AttemptsOf(doc, "outside_attempts", &where);
    ForRows(doc, "slots_held", 4, &where, [&](const json& s) {
      r.slots_held.push_back(
          {Whole<int64_t>(s[0]), Whole<int>(s[1]), Whole<int64_t>(s[2]), Whole<int64_t>(s[3])});
    });
    ForRows(doc, "workflows", 4, &where, [&](const json& w) {
      r.workflows.push_back(
          {Whole<int64_t>(w[0]), Whole<int>(w[1]), Whole<int64_t>(w[2]), Whole<int64_t>(w[3])});
    });
    ForRows(doc, "events", 6, &where, [&](const json& e) {
      r.events.push_back({Whole<int>(e[0]), Whole<int>(e[1]), Whole<int64_t>(e[2]),
                          Whole<int64_t>(e[3]), e[4].get<bool>(), e[5].get<std::string>()});
    });
    ForRows(doc, "gate_decisions", 4, &where, [&](const json& d) {
      const int v = Whole<int>(d[2]);
      if (v < 0 || v > VerdictNumber(GateVerdict::kFailOpen)) {
        throw std::invalid_argument("unknown verdict " + std::to_string(v));
      }
      r.gate_decisions.push_back({Whole<int64_t>(d[0]), Whole<int>(d[1]),
                                  static_cast<GateVerdict>(v), Whole<int64_t>(d[3])});
    });
    ForRows(doc, "deferrals", 5, &where, [&](const json& d) {
      r.deferrals.push_back({Whole<int64_t>(d[0]), Whole<int>(d[1]), Whole<int64_t>(d[2]),
                             Whole<int64_t>(d[3]), d[4].get<std::string>()});
    });
  } catch (const std::exception& e) {
    return Status::InvalidArgument(path.string() + ": " + where + ": " + e.what());
  }
  if (part.shard.count < 1 || part.shard.index < 0 || part.shard.index >= part.shard.count ||
      part.shard.tenant_indices.size() != r.tenants.size()) {
    return Status::InvalidArgument(path.string() +
                                   ": shard: index/count out of range or tenant_indices not one "
                                   "per tenant");
  }
  if (Status s = ValidateRecords(r); !s.ok()) {
    return Status::InvalidArgument(path.string() + ": " + s.message());
  }
  part.source = path.string();
  return part;
}

}  // namespace bp::loadgen
