// libFuzzer target: `loadgen merge`'s inputs: several records files
// (records_io.h) merged into one run (shard.h MergeShards). The input is the
// files' texts separated by a line "--part--"; each is read by
// ReadRecordsFile (from a private temporary file) and the accepted ones are
// merged. A merge that succeeds must give consistent records
// (ValidateRecords), as the reports assume. Built by scripts/fuzz.sh (BP_FUZZ=ON).
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <string>
#include <string_view>
#include <vector>

#include "bp/loadgen/records_io.h"
#include "bp/loadgen/shard.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  constexpr std::string_view kSeparator = "\n--part--\n";
  constexpr size_t kMaxParts = 4;
  static const std::filesystem::path path =
      std::filesystem::temp_directory_path() /
      ("bp-fuzz-merge-" + std::to_string(getpid()) + ".records.json");
  std::string_view rest(reinterpret_cast<const char*>(data), size);
  std::vector<bp::loadgen::ShardRecords> parts;
  while (parts.size() < kMaxParts) {
    const size_t cut = rest.find(kSeparator);
    const std::string_view text = rest.substr(0, cut);
    {
      std::ofstream out(path, std::ios::binary | std::ios::trunc);
      out.write(text.data(), static_cast<std::streamsize>(text.size()));
    }
    if (auto part = bp::loadgen::ReadRecordsFile(path); part.ok()) {
      parts.push_back(std::move(*part));
    }
    if (cut == std::string_view::npos) break;
    rest.remove_prefix(cut + kSeparator.size());
  }
  if (parts.empty()) return 0;
  auto merged = bp::loadgen::MergeShards(std::move(parts));
  if (merged.ok() && !bp::loadgen::ValidateRecords(*merged).ok()) __builtin_trap();
  return 0;
}
