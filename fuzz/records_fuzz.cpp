// libFuzzer target: loadgen's records files (records_io.h), the one file a
// `loadgen --shard` process writes and `loadgen merge` reads. The input is the
// file's text, read by ReadRecordsFile (it reads a path, so the input goes
// to a private temporary file first). An accepted file, written back
// (WriteRecordsFile) and read again, must be accepted and write the same
// text. Built by scripts/fuzz.sh (BP_FUZZ=ON).
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "bp/loadgen/records_io.h"

namespace {

std::filesystem::path TempPath(const char* name) {
  return std::filesystem::temp_directory_path() /
         ("bp-fuzz-records-" + std::to_string(getpid()) + "-" + name + ".json");
}

std::string Slurp(const std::filesystem::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const std::filesystem::path input = TempPath("in"), first = TempPath("a"),
                                     second = TempPath("b");
  {
    std::ofstream out(input, std::ios::binary | std::ios::trunc);
    out.write(reinterpret_cast<const char*>(data), static_cast<std::streamsize>(size));
  }
  auto part = bp::loadgen::ReadRecordsFile(input);
  if (!part.ok()) return 0;
  if (!bp::loadgen::WriteRecordsFile(first, *part).ok()) __builtin_trap();
  auto again = bp::loadgen::ReadRecordsFile(first);
  if (!again.ok()) __builtin_trap();
  if (!bp::loadgen::WriteRecordsFile(second, *again).ok()) __builtin_trap();
  if (Slurp(first) != Slurp(second)) __builtin_trap();
  return 0;
}
