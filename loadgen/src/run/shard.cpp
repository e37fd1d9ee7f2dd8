// A run as cooperating processes (shard.h): partition, setup once, aligned
// start and the children; the merge of their records is in shard_merge.cpp.
#include "bp/loadgen/shard.h"

#include <spdlog/spdlog.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>

#include "bp/decimal.h"
#include "bp/loadgen/bp_configuration.h"
#include "bp/loadgen/configurations.h"
#include "bp/loadgen/operator_aids.h"
#include "bp/loadgen/time_scale.h"

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
  bp.declared_config = options.gate_config;
  auto scale = TimeScale::Of(options.speedup);
  if (!scale.ok()) return scale.status();
  return ConfigureGateTarget(full, *scale, bp);
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

Status CheckStartAt(int64_t start_at_unix_ms, int64_t now_unix_ms) {
  // In double: a value near INT64_MAX minus now must not overflow.
  const double ahead_ms = static_cast<double>(start_at_unix_ms) - static_cast<double>(now_unix_ms);
  if (std::abs(ahead_ms) <= static_cast<double>(kStartAtWindowMs)) return Status::Ok();
  const double s = std::abs(ahead_ms) / 1000;
  // Just over the hour: minutes (FormatDuration), and "more than 1 h" ("1.0 h
  // in the future; it must be ... within 1 h" read as self-contradictory).
  const std::string far = FormatDuration(s);
  auto fits = [&](double v) {
    return std::abs(v - static_cast<double>(now_unix_ms)) <= static_cast<double>(kStartAtWindowMs);
  };
  std::string hint;
  if (fits(static_cast<double>(start_at_unix_ms) * 1000)) {
    hint = " (seconds? --start-at takes unix ms: " + std::to_string(start_at_unix_ms * 1000) + ")";
  } else if (fits(static_cast<double>(start_at_unix_ms) / 10)) {
    hint = " (an extra digit? " + std::to_string(start_at_unix_ms / 10) + " is within the hour)";
  }
  return Status::InvalidArgument(
      "--start-at " + std::to_string(start_at_unix_ms) + ": " + far +
      (ahead_ms > 0 ? " in the future" : " in the past") +
      (s < 2 * 3600 ? " (more than 1 h)" : "") + hint + "; it must be unix ms within 1 h of now (" +
      std::to_string(now_unix_ms) + "), e.g. $(( $(date +%s%3N) + 5000 ))");
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
  if (Status s = CheckStartAt(options.start_at_unix_ms, UnixMsNow()); !s.ok()) return s;
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
  if (!options.gate_config && !IsBaseline(options.configuration)) {
    // Every part declares the whole workload's configuration (all tenants'
    // weights), as the setup wrote it, for the re-seeds of its gate threads.
    auto scale = TimeScale::Of(options.speedup);
    if (!scale.ok()) return scale.status();
    options.gate_config = std::make_shared<const GateConfig>(GateConfigOf(full, *scale));
  }
  options.configure_upstream = false;
  options.configure_gate = false;
  options.seed += 7919 * static_cast<uint64_t>(shard.index);
  options.part = "part " + std::to_string(shard.index) + "/" + std::to_string(shard.count);
  auto records = RunOnce(*part, options);
  if (!records.ok()) return records.status();
  ShardRecords out;
  out.shard = std::move(shard);
  out.records = std::move(*records);
  return out;
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
      spdlog::info("{} {} #{}: {} processes, gate target \"{}\" ({})", full.name,
                   options.configuration, options.repeat, processes, shared.gate_target,
                   BpctlStatusCommand(options.valkey_url, shared.gate_target));
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
