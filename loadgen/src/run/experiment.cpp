// The experiment loop and one shard's run to a file (experiment.h).
#include "bp/loadgen/experiment.h"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "bp/loadgen/metrics.h"
#include "bp/loadgen/scenario_metrics.h"
#include "bp/loadgen/shard.h"

namespace bp::loadgen {

namespace fs = std::filesystem;

Status RunExperiment(const std::vector<Workload>& workloads, RunOptions run,
                     const ExperimentOptions& options, std::ostream& out) {
  std::vector<WorkloadSummary> summaries;
  for (const Workload& w : workloads) {
    std::vector<RunMetrics> metrics;
    for (const auto& c : options.configurations) {
      for (int r = 0; r < options.repeats; ++r) {
        run.configuration = c;
        run.repeat = r;
        std::string repeat_dir = "r";  // appended: GCC 12's -Wrestrict misfires on "r" + ...
        repeat_dir += std::to_string(r);
        const fs::path dir = fs::path(options.out_dir) / w.name / c / repeat_dir;
        auto records = options.processes > 1
                           ? RunProcesses(w, run, options.processes, dir / "shards")
                           : RunOnce(w, run);
        if (!records.ok()) {
          return Status(records.status().code(), w.name + " " + c + " #" + std::to_string(r) +
                                                     ": " + records.status().message());
        }
        RunMetrics m = ComputeRunMetrics(*records);
        if (Status s = WriteRunOutputs(dir, *records, m, options.report); !s.ok()) return s;
        if (!w.events.empty()) {
          ScenarioMetrics sm = ComputeScenarioMetrics(*records, w.events);
          if (Status s = WriteScenarioOutputs(dir, m, sm, options.report); !s.ok()) return s;
        }
        out << RunTableMarkdown(m) << std::flush;
        metrics.push_back(std::move(m));
      }
    }
    if (Status s = WriteWorkloadReport(fs::path(options.out_dir) / w.name, metrics, options.report);
        !s.ok()) {
      return s;
    }
    summaries.push_back(SummarizeWorkload(metrics));
  }
  if (Status s = WriteComparison(options.out_dir, summaries); !s.ok()) return s;
  out << ComparisonMarkdown(summaries) << "\nresults in " << options.out_dir << "\n";
  return Status::Ok();
}

std::vector<std::string> ComparedWorkloadsDropped(const std::string& out_dir,
                                                  const std::vector<Workload>& workloads) {
  std::ifstream in(fs::path(out_dir) / "comparison.json");
  if (!in) return {};
  const nlohmann::json doc = nlohmann::json::parse(in, nullptr, /*allow_exceptions=*/false);
  std::vector<std::string> dropped;
  if (!doc.is_object() || !doc.contains("workloads") || !doc["workloads"].is_array()) {
    return dropped;
  }
  for (const nlohmann::json& w : doc["workloads"]) {
    if (!w.is_object() || !w.contains("workload") || !w["workload"].is_string()) continue;
    const std::string name = w["workload"].get<std::string>();
    const bool kept = std::any_of(workloads.begin(), workloads.end(),
                                  [&](const Workload& x) { return x.name == name; });
    if (!kept && std::find(dropped.begin(), dropped.end(), name) == dropped.end()) {
      dropped.push_back(name);
    }
  }
  return dropped;
}

Status RunShardToFile(const Workload& workload, RunOptions run, const ShardInfo& shard,
                      const std::string& out_dir, std::ostream& out) {
  run.configure_gate = shard.index == 0;
  run.configure_upstream = shard.index == 0;
  const std::string part_name = std::to_string(shard.index) + "/" + std::to_string(shard.count);
  auto part = RunShard(workload, run, shard);
  if (!part.ok()) {
    return Status(part.status().code(), workload.name + " " + run.configuration + " shard " +
                                            part_name + ": " + part.status().message());
  }
  const fs::path file = fs::path(out_dir) / workload.name / run.configuration / "r0" /
                        ("shard-" + std::to_string(shard.index) + ".records.json");
  if (Status s = WriteRecordsFile(file, *part); !s.ok()) return s;
  out << "records of part " << part_name << " in " << file.string() << " (loadgen merge --out DIR "
      << out_dir << ")\n";
  return Status::Ok();
}

}  // namespace bp::loadgen
