// One run as N cooperating loadgen processes: every process is a
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

// --start-at's window: a shared start must be within kStartAtWindowMs (1 h)
// of now, in the past or the future. Outside it the value is a mistake
// (seconds instead of ms, an extra digit, a stale variable), not a plan: a
// start 55 years ago was taken with a warning, a start 9 days ahead waited
// silently. InvalidArgument naming --start-at, the value, how far it is
// from now (`now_unix_ms`, the caller's wall clock; in minutes below 2 h,
// with "(more than 1 h)") and, when the value
// x 1000 or / 10 would fit, that hint, e.g. "--start-at 1764650000: 55.9
// years in the past (seconds? --start-at takes unix ms: 1764650000000)".
inline constexpr int64_t kStartAtWindowMs = 3'600'000;
Status CheckStartAt(int64_t start_at_unix_ms, int64_t now_unix_ms);

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
// tenant indices a partition of 0..tenants_total-1, no tenant id in two
// parts, each part's records consistent (ValidateRecords, records_io.h) and
// the recorded starts (start_unix_us) within kMaxStartSpreadS of each other.
// Times are shifted onto the earliest recorded start (run zero), activity
// and workflow ids renumbered, tenants put back in workload order; slots and
// fail-opens summed, end = the latest end. InvalidArgument naming the parts
// (with their files, ShardRecords::source) and what is wrong, e.g.
// "W bp #0: part 1/3 given twice (a.records.json and b.records.json)",
// "W bp #0: part(s) 1/3 missing (have 0/3, 2/3)".
// kMaxStartSpreadS is real seconds: cooperating parts start at one
// --start-at and record their actual starts milliseconds apart; parts
// seconds apart (a late part 0 setup, a wrong clock) shift only their own
// records, but a start of 0 next to one at the real epoch made a run of 17
// billion seconds.
inline constexpr double kMaxStartSpreadS = 10;
Result<RunRecords> MergeShards(std::vector<ShardRecords> parts);

// The whole shared run from one command: setup in this process, a start
// `start_delay_ms` from now, `processes` forked children running RunShard
// (each writing shard_dir/shard-<i>.records.json; progress from child 0
// only), waits for all, reads and merges their records. Unavailable when a
// child fails (its exit status named; its own error is on stderr).
Result<RunRecords> RunProcesses(const Workload& full, const RunOptions& options, int processes,
                                const std::filesystem::path& shard_dir, int start_delay_ms = 1000);

}  // namespace bp::loadgen
