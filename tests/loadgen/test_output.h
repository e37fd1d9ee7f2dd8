// What loadgen's report tests write and read back: a fresh folder under the
// build tree's test-output/, and a whole file as text.
#pragma once

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

namespace bp::loadgen::testing {

// BP_BINARY_DIR/test-output/SUITE/NAME, removed with its content (the
// writers under test create it).
inline std::filesystem::path FreshOutputDir(const std::string& suite, const std::string& name) {
  const std::filesystem::path dir =
      std::filesystem::path(BP_BINARY_DIR) / "test-output" / suite / name;
  std::filesystem::remove_all(dir);
  return dir;
}

// The file's text; "" when it cannot be read.
inline std::string Slurp(const std::filesystem::path& p) {
  std::ifstream in(p);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

}  // namespace bp::loadgen::testing
