// `loadgen merge` (merge_command.h).
#include "bp/loadgen/merge_command.h"

#include <unistd.h>

#include <algorithm>
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
    "  wait; loadgen merge --out results shards\n"
    "exit codes: 0 merged; 1 a report could not be written; 2 bad usage, or a records file\n"
    "  missing, unreadable, corrupt or a part short (nothing written).\n";

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
  // Bad input: the one message and where the usage is (not all of it).
  auto usage = [&](const std::string& what) {
    err << "loadgen merge: " << what << "\nsee loadgen merge --help\n";
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

  // Each records file once: a path given twice, or a file both given and
  // found under a directory given, would be the same part twice.
  std::vector<fs::path> files;
  std::map<fs::path, std::string> given_as;  // canonical file -> the argument
  auto add = [&](const fs::path& file, const std::string& arg) -> std::string {
    std::error_code ec;
    fs::path key = fs::weakly_canonical(file, ec);
    if (ec) key = file.lexically_normal();
    auto [it, fresh] = given_as.emplace(key, arg);
    if (!fresh) {
      return it->second == arg
                 ? arg + " given twice"
                 : file.string() + " given twice (by " + it->second + " and " + arg + ")";
    }
    files.push_back(file);
    return "";
  };
  for (const fs::path& p : inputs) {
    std::error_code ec;
    std::string twice;
    if (fs::is_directory(p, ec)) {
      std::vector<fs::path> found;
      for (auto it = fs::recursive_directory_iterator(p, ec); !ec && it != fs::end(it);
           it.increment(ec)) {
        if (it->is_regular_file() && IsRecordsFile(it->path())) found.push_back(it->path());
      }
      std::sort(found.begin(), found.end());
      for (const fs::path& f : found) {
        if (twice.empty()) twice = add(f, p.string());
      }
    } else if (fs::is_regular_file(p, ec)) {
      twice = add(p, p.string());
    } else {
      return usage(p.string() + ": no such file or directory");
    }
    if (!twice.empty()) return usage(twice);
  }
  if (files.empty()) return usage("no *.records.json under the paths given");
  std::sort(files.begin(), files.end());

  // Every run read and merged before anything is written: a bad part of the
  // last run leaves no half-written results.
  std::map<std::tuple<std::string, std::string, int>, std::vector<ShardRecords>> runs;
  for (const fs::path& f : files) {
    auto part = ReadRecordsFile(f);
    if (!part.ok()) {
      err << "loadgen merge: " << part.status().message() << "\n";
      return 2;
    }
    const RunRecords& r = part->records;
    runs[{r.workload, r.configuration, r.repeat}].push_back(std::move(*part));
  }
  std::vector<std::pair<std::string, RunRecords>> merged_runs;  // (workload, records)
  for (auto& [key, parts] : runs) {
    auto merged = MergeShards(std::move(parts));
    if (!merged.ok()) {
      err << "loadgen merge: " << merged.status().message() << "\n";
      return 2;
    }
    merged_runs.emplace_back(std::get<0>(key), std::move(*merged));
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
  for (auto& [workload, merged] : merged_runs) {
    RunMetrics m = ComputeRunMetrics(merged);
    const fs::path dir =
        fs::path(out_dir) / workload / merged.configuration / ("r" + std::to_string(merged.repeat));
    if (Status s = WriteRunOutputs(dir, merged, m, report); !s.ok()) {
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
