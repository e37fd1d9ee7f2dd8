// The merge of the parts of a run made by cooperating processes (shard.h
// MergeShards): checks that the parts are one run, then shifts, renumbers
// and re-orders their records into the records of one run.
#include <algorithm>
#include <cstdio>
#include <map>

#include "bp/loadgen/shard.h"

namespace bp::loadgen {
namespace {

int64_t Shift(int64_t t, int64_t offset) { return t >= 0 ? t + offset : t; }

template <typename T, typename Key>
void SortBy(std::vector<T>& v, Key key) {
  std::stable_sort(v.begin(), v.end(), [&](const T& a, const T& b) { return key(a) < key(b); });
}

}  // namespace

Result<RunRecords> MergeShards(std::vector<ShardRecords> parts) {
  if (parts.empty()) return Status::InvalidArgument("no records to merge");
  std::stable_sort(parts.begin(), parts.end(), [](const ShardRecords& a, const ShardRecords& b) {
    return a.shard.index < b.shard.index;
  });
  const RunRecords& first = parts[0].records;
  const int n = parts[0].shard.count;
  const int total = parts[0].shard.tenants_total;
  const std::string run =
      first.workload + " " + first.configuration + " #" + std::to_string(first.repeat);
  // "part 1/2" or "part 1/2 (shards/shard-1.records.json)".
  auto name = [](const ShardRecords& p) {
    return "part " + std::to_string(p.shard.index) + "/" + std::to_string(p.shard.count) +
           (p.source.empty() ? "" : " (" + p.source + ")");
  };
  for (const ShardRecords& p : parts) {
    if (p.shard.count != n) {
      return Status::InvalidArgument(run + ": " + name(p) + " is a part of " +
                                     std::to_string(p.shard.count) + ", " + name(parts[0]) +
                                     " of " + std::to_string(n));
    }
    if (p.shard.index < 0 || p.shard.index >= n) {
      return Status::InvalidArgument(run + ": " + name(p) + ": shard index out of range");
    }
    if (Status s = ValidateRecords(p.records); !s.ok()) {
      return Status::InvalidArgument(run + ": " + name(p) + ": " + s.message());
    }
  }
  for (size_t p = 1; p < parts.size(); ++p) {
    if (parts[p].shard.index == parts[p - 1].shard.index) {
      return Status::InvalidArgument(
          run + ": part " + std::to_string(parts[p].shard.index) + "/" + std::to_string(n) +
          " given twice" +
          (parts[p].source.empty() ? ""
                                   : " (" + parts[p - 1].source + " and " + parts[p].source + ")"));
    }
  }
  if (static_cast<int>(parts.size()) != n) {
    std::string missing, have;
    int next = 0;
    for (const ShardRecords& p : parts) {
      for (; next < p.shard.index; ++next) {
        missing += (missing.empty() ? "" : ", ") + std::to_string(next) + "/" + std::to_string(n);
      }
      next = p.shard.index + 1;
      have += (have.empty() ? "" : ", ") + std::to_string(p.shard.index) + "/" + std::to_string(n);
    }
    for (; next < n; ++next) {
      missing += (missing.empty() ? "" : ", ") + std::to_string(next) + "/" + std::to_string(n);
    }
    return Status::InvalidArgument(run + ": part(s) " + missing + " missing (have " + have + ")");
  }
  std::vector<int> owner(static_cast<size_t>(std::max(total, 0)), -1);
  std::map<std::string, int> tenant_part;  // tenant id -> the part that ran it
  const ShardRecords* earliest = &parts[0];
  const ShardRecords* latest = &parts[0];
  for (size_t p = 0; p < parts.size(); ++p) {
    const ShardInfo& s = parts[p].shard;
    const RunRecords& r = parts[p].records;
    auto differs = [&](const std::string& what) {
      return Status::InvalidArgument(run + ": " + name(parts[p]) + " has a different " + what);
    };
    if (r.workload != first.workload) return differs("workload");
    if (r.configuration != first.configuration) return differs("configuration");
    if (r.repeat != first.repeat) return differs("repeat");
    if (r.speedup != first.speedup) return differs("speedup");
    if (r.cap_requests_per_s != first.cap_requests_per_s ||
        r.cap_tokens_per_s != first.cap_tokens_per_s) {
      return differs("upstream caps");
    }
    if (r.gate_target != first.gate_target) return differs("gate target");
    if (s.tenants_total != total) return differs("tenant count");
    if (!r.events.empty()) return differs("scenario (events cannot be merged)");
    for (int t : s.tenant_indices) {
      if (t < 0 || t >= total || owner[static_cast<size_t>(t)] >= 0) {
        return differs("tenant partition (tenant " + std::to_string(t) + " out of range or twice)");
      }
      owner[static_cast<size_t>(t)] = s.index;
    }
    for (const TenantInfo& t : r.tenants) {
      auto [it, fresh] = tenant_part.emplace(t.id, s.index);
      if (!fresh) {
        return Status::InvalidArgument(run + ": tenant \"" + t.id + "\" in part " +
                                       std::to_string(it->second) + "/" + std::to_string(n) +
                                       " and in " + name(parts[p]));
      }
    }
    if (r.start_unix_us < earliest->records.start_unix_us) earliest = &parts[p];
    if (r.start_unix_us > latest->records.start_unix_us) latest = &parts[p];
  }
  for (int t = 0; t < total; ++t) {
    if (owner[static_cast<size_t>(t)] < 0) {
      return Status::InvalidArgument(run + ": no part ran tenant " + std::to_string(t));
    }
  }
  // The parts of one run start together (one --start-at); starts far apart
  // are parts of different runs, or a clock or a records file that is wrong.
  const int64_t zero = earliest->records.start_unix_us;
  const double spread_s =
      static_cast<double>(latest->records.start_unix_us) / 1e6 - static_cast<double>(zero) / 1e6;
  if (spread_s > kMaxStartSpreadS) {
    char text[64];
    std::snprintf(text, sizeof text, "%.3f", spread_s);
    return Status::InvalidArgument(
        run + ": " + name(*latest) + " started " + text + " s after " + name(*earliest) +
        ": start_unix_us " + std::to_string(latest->records.start_unix_us) + " vs " +
        std::to_string(zero) + "; the parts of one run start within " +
        std::to_string(static_cast<int>(kMaxStartSpreadS)) + " s of each other");
  }

  RunRecords m;
  m.workload = first.workload;
  m.configuration = first.configuration;
  m.repeat = first.repeat;
  m.speedup = first.speedup;
  m.cap_requests_per_s = first.cap_requests_per_s;
  m.cap_tokens_per_s = first.cap_tokens_per_s;
  m.flat_share = first.flat_share;
  m.gate_target = first.gate_target;
  m.gate_server = first.gate_server;
  m.start_unix_us = zero;
  m.tenants.resize(static_cast<size_t>(total));
  for (ShardRecords& part : parts) {
    RunRecords& r = part.records;
    const std::vector<int>& global = part.shard.tenant_indices;
    const int64_t off = r.start_unix_us - zero;
    const int64_t activity_base = static_cast<int64_t>(m.activities.size());
    const int64_t workflow_base = static_cast<int64_t>(m.workflows.size());
    auto tenant = [&](int local) {
      return local >= 0 ? global[static_cast<size_t>(local)] : local;
    };
    m.slots += r.slots;
    m.gate_fail_opens += r.gate_fail_opens;
    m.gate_breaker_opens += r.gate_breaker_opens;
    m.gate_fail_opens_unreachable += r.gate_fail_opens_unreachable;
    m.gate_fail_opens_timed_out += r.gate_fail_opens_timed_out;
    m.gate_fail_opens_unconfigured += r.gate_fail_opens_unconfigured;
    m.gate_fail_opens_server_error += r.gate_fail_opens_server_error;
    m.gate_reseeds += r.gate_reseeds;
    m.gate_admits_ahead += r.gate_admits_ahead;
    m.gate_start_in_us += r.gate_start_in_us;
    m.gate_release_errors += r.gate_release_errors;
    m.gate_unreleased += r.gate_unreleased;
    m.end_us = std::max(m.end_us, r.end_us + off);
    for (size_t t = 0; t < r.tenants.size(); ++t) {
      TenantInfo info = r.tenants[t];
      info.start_us = Shift(info.start_us, off);
      info.finish_us = Shift(info.finish_us, off);
      info.join_us = Shift(info.join_us, off);
      info.leave_us = Shift(info.leave_us, off);
      m.tenants[static_cast<size_t>(global[t])] = std::move(info);
    }
    for (ActivityRecord a : r.activities) {
      a.id += activity_base;
      a.workflow_id += workflow_base;
      a.tenant_index = tenant(a.tenant_index);
      a.scheduled_us = Shift(a.scheduled_us, off);
      a.first_send_us = Shift(a.first_send_us, off);
      a.final_answer_us = Shift(a.final_answer_us, off);
      a.completed_us = Shift(a.completed_us, off);
      m.activities.push_back(std::move(a));
    }
    for (WorkflowRecord w : r.workflows) {
      w.id += workflow_base;
      w.tenant_index = tenant(w.tenant_index);
      w.start_us = Shift(w.start_us, off);
      w.end_us = Shift(w.end_us, off);
      m.workflows.push_back(w);
    }
    for (auto* v : {&r.attempts, &r.outside_attempts}) {
      auto& dst = v == &r.attempts ? m.attempts : m.outside_attempts;
      for (AttemptRecord a : *v) {
        if (a.activity_id >= 0) a.activity_id += activity_base;
        a.tenant_index = tenant(a.tenant_index);
        a.send_us = Shift(a.send_us, off);
        a.done_us = Shift(a.done_us, off);
        dst.push_back(std::move(a));
      }
    }
    for (SlotInterval s : r.slots_held) {
      s.activity_id += activity_base;
      s.tenant_index = tenant(s.tenant_index);
      s.acquire_us = Shift(s.acquire_us, off);
      s.release_us = Shift(s.release_us, off);
      m.slots_held.push_back(s);
    }
    for (GateDecisionRecord d : r.gate_decisions) {
      d.tenant_index = tenant(d.tenant_index);
      d.at_us = Shift(d.at_us, off);
      m.gate_decisions.push_back(d);
    }
    for (DeferralRecord d : r.deferrals) {
      d.activity_id += activity_base;
      d.tenant_index = tenant(d.tenant_index);
      d.at_us = Shift(d.at_us, off);
      m.deferrals.push_back(std::move(d));
    }
  }
  // One time order, as a single engine records them.
  SortBy(m.attempts, [](const AttemptRecord& a) { return a.send_us; });
  SortBy(m.outside_attempts, [](const AttemptRecord& a) { return a.send_us; });
  SortBy(m.slots_held, [](const SlotInterval& s) { return s.release_us; });
  SortBy(m.gate_decisions, [](const GateDecisionRecord& d) { return d.at_us; });
  SortBy(m.deferrals, [](const DeferralRecord& d) { return d.at_us; });
  return m;
}

}  // namespace bp::loadgen
