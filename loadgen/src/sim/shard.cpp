// A run as cooperating processes (shard.h): partition, setup once, aligned
// start, the children, and the merge of their records.
#include "bp/loadgen/shard.h"

#include <spdlog/spdlog.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>

#include "bp/decimal.h"
#include "bp/loadgen/bp_configuration.h"
#include "bp/loadgen/time_scale.h"
#include "bp/loadgen/configurations.h"

namespace bp::loadgen {
namespace {

int64_t UnixMsNow() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

// The setup of a shared run, for the whole workload: the upstream's section
// and, for bp configurations, the gate target.
Status SetupSharedRun(const Workload& full, const RunOptions& options) {
  if (options.configure_upstream) {
    if (Status s = ConfigureUpstream(full, options); !s.ok()) return s;
  }
  if (IsBaseline(options.configuration)) return Status::Ok();
  auto ablation = BpAblationOf(options.configuration);
  if (!ablation.ok()) return ablation.status();
  BpOptions bp;
  bp.valkey_url = options.valkey_url;
  bp.target = options.gate_target;
  bp.ablation = *ablation;
  bp.command_timeout_ms = options.gate_command_timeout_ms;
  bp.breaker_cool_off_ms = options.gate_breaker_cool_off_ms;
  auto scale = TimeScale::Of(options.speedup);
  if (!scale.ok()) return scale.status();
  return ConfigureGateTarget(full, *scale, bp);
}

int64_t Shift(int64_t t, int64_t offset) { return t >= 0 ? t + offset : t; }

template <typename T, typename Key>
void SortBy(std::vector<T>& v, Key key) {
  std::stable_sort(v.begin(), v.end(), [&](const T& a, const T& b) { return key(a) < key(b); });
}

}  // namespace

Result<ShardInfo> ParseShard(const std::string& text) {
  const size_t slash = text.find('/');
  auto bad = [&] {
    return Status::InvalidArgument("--shard must be I/N with 0 <= I < N <= 256, got \"" + text +
                                   "\"");
  };
  if (slash == std::string::npos) return bad();
  const std::optional<int64_t> i = ParseDecimalInt(text.substr(0, slash));
  const std::optional<int64_t> n = ParseDecimalInt(text.substr(slash + 1));
  if (!i || !n || *n < 1 || *n > 256 || *i < 0 || *i >= *n) return bad();
  ShardInfo s;
  s.index = static_cast<int>(*i);
  s.count = static_cast<int>(*n);
  return s;
}

Result<Workload> ShardWorkload(const Workload& full, ShardInfo* shard) {
  const int n = shard->count, i = shard->index;
  if (!full.events.empty()) {
    return Status::InvalidArgument(full.source +
                                   ": scenario events cannot be split over processes");
  }
  if (static_cast<int>(full.tenants.size()) < n) {
    return Status::InvalidArgument(full.source + ": " + std::to_string(full.tenants.size()) +
                                   " tenants cannot be split over " + std::to_string(n) +
                                   " processes");
  }
  if (full.slots < n) {
    return Status::InvalidArgument(full.source + ": " + std::to_string(full.slots) +
                                   " slots cannot be split over " + std::to_string(n) +
                                   " processes");
  }
  Workload part = full;
  part.tenants.clear();
  shard->tenant_indices.clear();
  shard->tenants_total = static_cast<int>(full.tenants.size());
  for (size_t t = static_cast<size_t>(i); t < full.tenants.size(); t += static_cast<size_t>(n)) {
    part.tenants.push_back(full.tenants[t]);
    shard->tenant_indices.push_back(static_cast<int>(t));
  }
  part.slots = full.slots / n + (i < full.slots % n ? 1 : 0);
  return part;
}

std::string FreshGateTarget(const Workload& workload, const std::string& configuration,
                            int repeat) {
  return workload.name + "-" + configuration + "-r" + std::to_string(repeat) + "-" +
         std::to_string(UnixMsNow());
}

Result<ShardRecords> RunShard(const Workload& full, RunOptions options, ShardInfo shard) {
  auto part = ShardWorkload(full, &shard);
  if (!part.ok()) return part.status();
  if (options.start_at_unix_ms <= 0) {
    return Status::InvalidArgument("--start-at: a shared start time (unix ms) is required");
  }
  if (!IsBaseline(options.configuration) && options.gate_target.empty()) {
    return Status::InvalidArgument("--gate-target: a " + options.configuration +
                                   " run over processes needs the shared gate target's name");
  }
  if (options.configure_gate) {
    if (Status s = SetupSharedRun(full, options); !s.ok()) return s;
    const int64_t late = UnixMsNow() - options.start_at_unix_ms;
    if (late > 0) {
      spdlog::error(
          "shard {}/{}: the setup ended {} ms after the shared start; the others may "
          "have started against an unconfigured gate (fail-opens) or upstream",
          shard.index, shard.count, late);
    }
  }
  options.configure_upstream = false;
  options.configure_gate = false;
  options.seed += 7919 * static_cast<uint64_t>(shard.index);
  auto records = RunOnce(*part, options);
  if (!records.ok()) return records.status();
  ShardRecords out;
  out.shard = std::move(shard);
  out.records = std::move(*records);
  return out;
}

Result<RunRecords> MergeShards(std::vector<ShardRecords> parts) {
  if (parts.empty()) return Status::InvalidArgument("no records to merge");
  std::sort(parts.begin(), parts.end(), [](const ShardRecords& a, const ShardRecords& b) {
    return a.shard.index < b.shard.index;
  });
  const RunRecords& first = parts[0].records;
  const int n = parts[0].shard.count;
  const int total = parts[0].shard.tenants_total;
  const std::string run =
      first.workload + " " + first.configuration + " #" + std::to_string(first.repeat);
  if (static_cast<int>(parts.size()) != n) {
    return Status::InvalidArgument(run + ": " + std::to_string(parts.size()) + " parts for " +
                                   std::to_string(n) + " processes");
  }
  std::vector<int> owner(static_cast<size_t>(std::max(total, 0)), -1);
  int64_t zero = first.start_unix_us;
  for (size_t p = 0; p < parts.size(); ++p) {
    const ShardInfo& s = parts[p].shard;
    const RunRecords& r = parts[p].records;
    auto differs = [&](const std::string& what) {
      return Status::InvalidArgument(run + ": part " + std::to_string(s.index) + "/" +
                                     std::to_string(s.count) + " has a different " + what);
    };
    if (s.index != static_cast<int>(p) || s.count != n) return differs("shard numbering");
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
    zero = std::min(zero, r.start_unix_us);
  }
  for (int t = 0; t < total; ++t) {
    if (owner[static_cast<size_t>(t)] < 0) {
      return Status::InvalidArgument(run + ": no part ran tenant " + std::to_string(t));
    }
  }

  RunRecords m;
  m.workload = first.workload;
  m.configuration = first.configuration;
  m.repeat = first.repeat;
  m.speedup = first.speedup;
  m.cap_requests_per_s = first.cap_requests_per_s;
  m.cap_tokens_per_s = first.cap_tokens_per_s;
  m.gate_target = first.gate_target;
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

Result<RunRecords> RunProcesses(const Workload& full, const RunOptions& options, int processes,
                                const std::filesystem::path& shard_dir, int start_delay_ms) {
  if (processes < 1 || processes > 256) {
    return Status::InvalidArgument("--processes must be in [1, 256], got " +
                                   std::to_string(processes));
  }
  ShardInfo check{0, processes, 0, {}};
  if (auto w = ShardWorkload(full, &check); !w.ok()) return w.status();
  RunOptions shared = options;
  if (!IsBaseline(options.configuration)) {
    shared.gate_target = FreshGateTarget(full, options.configuration, options.repeat);
    if (options.progress) {
      spdlog::info("{} {} #{}: {} processes, gate target \"{}\" (bpctl --target {} status)",
                   full.name, options.configuration, options.repeat, processes, shared.gate_target,
                   shared.gate_target);
    }
  }
  if (Status s = SetupSharedRun(full, shared); !s.ok()) return s;
  shared.configure_upstream = false;
  shared.configure_gate = false;
  shared.start_at_unix_ms = UnixMsNow() + start_delay_ms;

  std::error_code ec;
  std::filesystem::create_directories(shard_dir, ec);
  if (ec) return Status::Internal("cannot create " + shard_dir.string() + ": " + ec.message());
  auto file_of = [&](int i) {
    return shard_dir / ("shard-" + std::to_string(i) + ".records.json");
  };
  std::fflush(nullptr);  // nothing buffered is written twice by the children
  std::vector<pid_t> children;
  for (int i = 0; i < processes; ++i) {
    std::filesystem::remove(file_of(i), ec);
    const pid_t pid = ::fork();
    if (pid < 0) {
      for (pid_t c : children) ::waitpid(c, nullptr, 0);
      return Status::Internal("fork failed for process " + std::to_string(i));
    }
    if (pid == 0) {
      RunOptions mine = shared;
      mine.progress = shared.progress && i == 0;
      auto part = RunShard(full, mine, ShardInfo{i, processes, 0, {}});
      int code = 0;
      if (!part.ok()) {
        std::fprintf(stderr, "loadgen: process %d/%d: %s\n", i, processes,
                     part.status().message().c_str());
        code = 1;
      } else if (Status s = WriteRecordsFile(file_of(i), *part); !s.ok()) {
        std::fprintf(stderr, "loadgen: process %d/%d: %s\n", i, processes, s.message().c_str());
        code = 1;
      }
      std::fflush(nullptr);
      ::_exit(code);
    }
    children.push_back(pid);
  }
  std::string failed;
  for (int i = 0; i < processes; ++i) {
    int status = 0;
    if (::waitpid(children[static_cast<size_t>(i)], &status, 0) < 0 || !WIFEXITED(status) ||
        WEXITSTATUS(status) != 0) {
      failed += (failed.empty() ? "" : ", ") + std::to_string(i) +
                (WIFSIGNALED(status) ? " (signal " + std::to_string(WTERMSIG(status)) + ")"
                                     : " (exit " + std::to_string(WEXITSTATUS(status)) + ")");
    }
  }
  if (!failed.empty()) {
    return Status::Unavailable(full.name + " " + options.configuration + ": process(es) " + failed +
                               " of " + std::to_string(processes) + " failed");
  }
  std::vector<ShardRecords> parts;
  for (int i = 0; i < processes; ++i) {
    auto part = ReadRecordsFile(file_of(i));
    if (!part.ok()) return part.status();
    parts.push_back(std::move(*part));
  }
  return MergeShards(std::move(parts));
}

}  // namespace bp::loadgen
