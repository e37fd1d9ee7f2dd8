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
// Returns the exit status: 0 done; 2 bad input, nothing written: a bad
// command line, a path given twice (or a file found twice under the paths),
// a records file unreadable or inconsistent (records_io.h), the parts of a
// run incomplete, twice or not of one run (MergeShards) - one message line
// on `err` naming the file, part or field, then "see loadgen merge --help";
// 1 a report not written (message on `err`). Every run is read and merged
// before any output is written. Tables go to `out`.
#pragma once

#include <iosfwd>
#include <string>
#include <vector>

namespace bp::loadgen {

// args: the words after "merge".
int MergeCommand(const std::vector<std::string>& args, std::ostream& out, std::ostream& err);

}  // namespace bp::loadgen
