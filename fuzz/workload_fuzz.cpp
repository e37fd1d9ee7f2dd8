// libFuzzer target: loadgen's workload loader (the text of a workload file ->
// JSON -> ParseWorkload, as LoadWorkload does), then the derived counts of an accepted workload.
// Built by scripts/fuzz.sh (BP_FUZZ=ON).
#include <cstddef>
#include <cstdint>
#include <nlohmann/json.hpp>

#include "bp/loadgen/workload.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const auto doc = nlohmann::json::parse(data, data + size, nullptr, /*allow_exceptions=*/false);
  if (doc.is_discarded()) return 0;
  auto w = bp::loadgen::ParseWorkload(doc, "fuzz.json");
  if (!w.ok()) return 0;
  if (w->total_activities() < 0) __builtin_trap();
  return 0;
}
