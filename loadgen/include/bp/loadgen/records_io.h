// A run's records (records.h) as one JSON file, written by a loadgen process
// that ran part of a run (shard.h) and read back by the process that merges
// the parts. Every field of RunRecords round-trips exactly (integers as
// integers, doubles as JSON numbers printed with round-trip precision).
//
// Format ("format": "bp-loadgen-records/1"): the scalar fields of RunRecords
// by name, a "shard" object (ShardInfo) and one array per record vector whose
// items are arrays of the record's fields in declaration order (records.h),
// e.g. "attempts": [[activity_id, tenant_index, send_us, done_us, status,
// proxy_local, bound, tokens], ...], a streamed attempt's row followed by
// stream, ttft_us, itl_us and token_events. Compact on purpose: a 10 000-tenant run has
// hundreds of thousands of rows.
//
// Errors: a file that cannot be written or read -> Internal / NotFound; a
// document that is not this format (bad JSON, missing field, wrong type) or
// whose rows name a tenant, activity or workflow the file does not hold
// (ValidateRecords) -> InvalidArgument naming the file, the row and the
// value ("x.records.json: attempts[3].activity_id: 99 names no activity
// (the part has 42: 0..41)"). Nothing throws.
// Thread-safety: no shared state.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include "bp/loadgen/records.h"
#include "bp/status.h"

namespace bp::loadgen {

// Which part of a run a records file holds: shard `index` of `count`, whose
// tenant i is tenant tenant_indices[i] of the whole workload
// (tenants_total tenants). A whole run is shard 0 of 1.
struct ShardInfo {
  int index = 0;
  int count = 1;
  int tenants_total = 0;
  std::vector<int> tenant_indices;
};

struct ShardRecords {
  ShardInfo shard;
  RunRecords records;
  std::string source;  // the file ReadRecordsFile read it from ("" if made in
                       // memory); named in the merge's messages
};

// Writes `part` to path (parents created). Internal on I/O errors.
Status WriteRecordsFile(const std::filesystem::path& path, const ShardRecords& part);

// Reads a file written by WriteRecordsFile and checks it (ValidateRecords).
// The run's fields are checked as read: slots an integer in [1, 100000],
// end_us an integer in [0, 365 days in us], gate_fail_opens,
// gate_breaker_opens and gate_unreleased whole counts >= 0 (read unchecked,
// a -7 or a 1.5 would become 2^64 - 7 or 1). InvalidArgument "PATH: FIELD: why" for a
// bad file.
Result<ShardRecords> ReadRecordsFile(const std::filesystem::path& path);

// The references inside one run's (or part's) records, as the Engine writes
// them: activities[i].id == i and workflows[i].id == i (local ids, dense:
// the merge renumbers by offsets); every tenant_index names one of
// r.tenants (attempts and outside_attempts may say -1: the outside client);
// every activity_id (attempts, outside_attempts: or -1; slots_held,
// deferrals) names an activity; every activity's workflow_id a workflow.
// InvalidArgument "ROWS[i].FIELD: VALUE names no ... (the part has N: 0..N-1)"
// for the first that does not.
Status ValidateRecords(const RunRecords& r);

}  // namespace bp::loadgen
