// `loadgen merge` (merge_command.h).
#include "bp/loadgen/merge_command.h"

#include <unistd.h>

#include <filesystem>
#include <map>
#include <ostream>
#include <tuple>

#include "bp/loadgen/metrics.h"
#include "bp/loadgen/report.h"
#include "bp/loadgen/shard.h"

namespace bp::loadgen {
namespace {

namespace fs = std::filesystem;

constexpr const char* kUsage =
    "usage: loadgen merge --out DIR [--no-figures] PATH...\n"
    "  PATH: a records file (*.records.json, written by loadgen --shard I/N) or a directory\n"
    "  searched for them; every part 0..N-1 of each run is needed. Writes the reports of\n"
    "  single-process runs into DIR.\n"
    "example:\n"
    "  loadgen --workload W --config bp --shard 0/2 --start-at T --gate-target G --out shards &\n"
    "  loadgen --workload W --config bp --shard 1/2 --start-at T --gate-target G --out shards\n"
    "  wait; loadgen merge --out results shards\n";

bool IsRecordsFile(const fs::path& p) {
  const std::string name = p.filename().string();
  const std::string suffix = ".records.json";
  return name.size() > suffix.size() &&
         name.compare(name.size() - suffix.size(), suffix.size(), suffix) == 0;
}

}  // namespace

int MergeCommand(const std::vector<std::string>& args, std::ostream& out, std::ostream& err) {
  std::string out_dir;
  ReportOptions report;
  std::vector<fs::path> inputs;
  auto usage = [&](const std::string& what) {
    err << "loadgen merge: " << what << "\n\n" << kUsage;
    return 2;
  };
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string& a = args[i];
    if (a == "--help" || a == "-h") {
      out << kUsage;
      return 0;
    } else if (a == "--out" || a == "-o") {
      if (i + 1 >= args.size() || args[i + 1].empty()) return usage("--out needs a directory");
      out_dir = args[++i];
    } else if (a.rfind("--out=", 0) == 0) {
      out_dir = a.substr(6);
    } else if (a == "--no-figures") {
      report.figures = false;
    } else if (!a.empty() && a[0] == '-') {
      return usage("unknown option " + a);
    } else {
      inputs.emplace_back(a);
    }
  }
  if (out_dir.empty()) return usage("--out DIR is required");
  if (inputs.empty()) return usage("no records files or directories given");

  std::vector<fs::path> files;
  for (const fs::path& p : inputs) {
    std::error_code ec;
    if (fs::is_directory(p, ec)) {
      for (auto it = fs::recursive_directory_iterator(p, ec); !ec && it != fs::end(it);
           it.increment(ec)) {
        if (it->is_regular_file() && IsRecordsFile(it->path())) files.push_back(it->path());
      }
    } else if (fs::is_regular_file(p, ec)) {
      files.push_back(p);
    } else {
      return usage(p.string() + ": no such file or directory");
    }
  }
  if (files.empty()) return usage("no *.records.json under the paths given");
  std::sort(files.begin(), files.end());

  // Runs in (workload, configuration, repeat) order; workloads in first-seen order.
  std::map<std::tuple<std::string, std::string, int>, std::vector<ShardRecords>> runs;
  for (const fs::path& f : files) {
    auto part = ReadRecordsFile(f);
    if (!part.ok()) {
      err << "loadgen merge: " << part.status().message() << "\n";
      return 1;
    }
    const RunRecords& r = part->records;
    runs[{r.workload, r.configuration, r.repeat}].push_back(std::move(*part));
  }
  {
    std::error_code ec;
    fs::create_directories(out_dir, ec);
    if (ec || ::access(out_dir.c_str(), W_OK) != 0) {
      return usage("--out " + out_dir + ": cannot create or write the results directory");
    }
  }
  std::map<std::string, std::vector<RunMetrics>> by_workload;
  std::vector<std::string> workload_order;
  for (auto& [key, parts] : runs) {
    const auto& [workload, configuration, repeat] = key;
    auto merged = MergeShards(std::move(parts));
    if (!merged.ok()) {
      err << "loadgen merge: " << merged.status().message() << "\n";
      return 1;
    }
    RunMetrics m = ComputeRunMetrics(*merged);
    const fs::path dir =
        fs::path(out_dir) / workload / configuration / ("r" + std::to_string(repeat));
    if (Status s = WriteRunOutputs(dir, *merged, m, report); !s.ok()) {
      err << "loadgen merge: " << s.message() << "\n";
      return 1;
    }
    out << RunTableMarkdown(m) << std::flush;
    if (!by_workload.count(workload)) workload_order.push_back(workload);
    by_workload[workload].push_back(std::move(m));
  }
  std::vector<WorkloadSummary> summaries;
  for (const std::string& w : workload_order) {
    if (Status s = WriteWorkloadReport(fs::path(out_dir) / w, by_workload[w], report); !s.ok()) {
      err << "loadgen merge: " << s.message() << "\n";
      return 1;
    }
    summaries.push_back(SummarizeWorkload(by_workload[w]));
  }
  if (Status s = WriteComparison(out_dir, summaries); !s.ok()) {
    err << "loadgen merge: " << s.message() << "\n";
    return 1;
  }
  out << ComparisonMarkdown(summaries) << "\nresults in " << out_dir << "\n";
  return 0;
}

}  // namespace bp::loadgen
