// One run as N cooperating loadgen processes (issue 11): every process is a
// worker of the same fleet, sharing one upstream (mockapi) and, for bp, one
// gate target; the workload's tenants are partitioned between them and their
// records are merged into the records of one run, from which the usual
// metrics and reports are computed (so fairness is measured over all
// tenants' merged records, never averaged over processes).
//
// Partition (ShardWorkload): tenant t (file order) goes to process t mod N;
// the workload's S worker slots are split, process i getting S / N plus one
// if i < S mod N, so the fleet has S slots as the single process had.
//
// Setup happens once, before the shared start time: the upstream's section
// is PUT to mockapi and the gate target's caps, tuning, omegas and the
// weight of every tenant of the whole workload are written by one process
// only (RunProcesses: the parent; manual shards: shard 0), never reset by the
// others. Every process starts its engine at the same wall-clock instant
// (RunOptions::start_at_unix_ms); the merge aligns the parts on the start
// each recorded (RunRecords::start_unix_us), so a late process only shifts
// its own records, it does not distort anyone's times.
//
// Not supported across processes: scenario events (InvalidArgument).
// Thread-safety: no shared state; RunProcesses forks, so call it from a
// process with no other threads running.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include "bp/loadgen/records_io.h"
#include "bp/loadgen/runner.h"
#include "bp/loadgen/workload.h"
#include "bp/status.h"

namespace bp::loadgen {

// "i/N" with 0 <= i < N and 1 <= N <= 256 -> {i, N}; InvalidArgument
// ("--shard: ...") otherwise.
Result<ShardInfo> ParseShard(const std::string& text);

// The part of `full` that shard `shard.index` of `shard.count` runs (see
// the partition above); tenant_indices and tenants_total are filled in.
// InvalidArgument when the workload has events, fewer tenants or fewer
// slots than processes.
Result<Workload> ShardWorkload(const Workload& full, ShardInfo* shard);

// The gate target of a shared run, "<workload>-<configuration>-r<repeat>-<unix ms>"
// as RunOnce names a fresh one.
std::string FreshGateTarget(const Workload& workload, const std::string& configuration, int repeat);

// One process's part of a shared run. options.gate_target names the shared
// target (bp configurations: required); options.start_at_unix_ms the shared
// start (required, > 0). With options.configure_gate true this process first
// does the setup (upstream and gate, for the whole workload), else it writes
// nothing. The engine seed is options.seed + repeat + 7919 * shard index.
Result<ShardRecords> RunShard(const Workload& full, RunOptions options, ShardInfo shard);

// One run of records from the parts of one run: every shard 0..N-1 once,
// same workload, configuration, repeat, speedup, caps and gate target, the
// tenant indices a partition of 0..tenants_total-1. Times are shifted onto
// the earliest recorded start (run zero), activity and workflow ids
// renumbered, tenants put back in workload order; slots and fail-opens
// summed, end = the latest end. InvalidArgument naming what differs.
Result<RunRecords> MergeShards(std::vector<ShardRecords> parts);

// The whole shared run from one command: setup in this process, a start
// `start_delay_ms` from now, `processes` forked children running RunShard
// (each writing shard_dir/shard-<i>.records.json; progress from child 0
// only), waits for all, reads and merges their records. Unavailable when a
// child fails (its exit status named; its own error is on stderr).
Result<RunRecords> RunProcesses(const Workload& full, const RunOptions& options, int processes,
                                const std::filesystem::path& shard_dir, int start_delay_ms = 1000);

}  // namespace bp::loadgen
