// `loadgen merge`: the reports of runs made by cooperating processes
// (`loadgen --shard I/N ...`, shard.h) from their records files.
//
//   loadgen merge --out DIR [--no-figures] PATH...
//
// Each PATH is a records file (*.records.json) or a directory searched
// recursively for them. Files are grouped by (workload, configuration,
// repeat); each group must hold every part 0..N-1 of its run once
// (MergeShards). Each merged run gets the outputs of a single-process run in
// DIR/<workload>/<configuration>/r<repeat> (summary.json, table.md, CSVs,
// heatmap), each workload its report and DIR the comparison, exactly as
// `loadgen --workload ...` writes them (report.h).
//
// Returns the exit status: 0 done, 2 bad command line (message and usage on
// `err`), 1 a records file unreadable, a run incomplete or inconsistent, or a
// report not written (message on `err`). Tables go to `out`.
#pragma once

#include <iosfwd>
#include <string>
#include <vector>

namespace bp::loadgen {

// args: the words after "merge".
int MergeCommand(const std::vector<std::string>& args, std::ostream& out, std::ostream& err);

}  // namespace bp::loadgen
