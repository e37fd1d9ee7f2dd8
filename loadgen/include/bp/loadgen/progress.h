// The progress line of a loadgen run (Engine, RunOptions::progress): on a
// terminal it is redrawn in place once a second; otherwise (a log file, a
// pipe) a plain line is written every 10 s. Pure formatting; thread-safe.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace bp::loadgen {

struct ProgressSnapshot {
  std::string label;               // "cross-priority bp #0"
  double elapsed_s = 0;            // real seconds since the run started
  double cap_s = 0;                // real seconds after which the run is cut off
  double speedup = 1;              // paper seconds = real seconds * speedup
  int64_t done = 0;                // activities finished
  int64_t total = 0;               // activities of the workload
  int busy_slots = 0;              // worker slots held now
  int slots = 0;                   // worker slots
  std::vector<int64_t> ok;         // OK calls per class, index 1..K (0 unused)
  std::vector<int64_t> throttled;  // upstream 429s per class
  std::vector<int64_t> local;      // gateway-local 429s per class (litellm)
};

// "cross-priority bp #0 12s / ~40s (cap 120s, paper 60s) done 300/1000
//  slots 18/20 | ok 290 429 10 | P1 ok 100 429 2 | ...": elapsed / expected
// real time, the expectation being elapsed * total / done (at the rate so
// far; "?" before the first activity finishes) and never above the cap.
std::string ProgressLine(const ProgressSnapshot& s);

}  // namespace bp::loadgen
