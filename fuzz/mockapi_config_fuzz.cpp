// libFuzzer target: mockapi's config loading (the text of a --config file ->
// JSON -> ConfigFromJson, as LoadConfigFile does), and printing a loaded
// config back (ConfigToJson), which must load again to the same JSON.
// Built by scripts/fuzz.sh (BP_FUZZ=ON).
#include <cstddef>
#include <cstdint>
#include <nlohmann/json.hpp>

#include "bp/mockapi/config.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const auto j = nlohmann::json::parse(data, data + size, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded()) return 0;
  auto c = bp::mockapi::ConfigFromJson(j, bp::mockapi::MockConfig{});
  if (!c.ok()) return 0;
  const nlohmann::json printed = bp::mockapi::ConfigToJson(*c);
  auto again = bp::mockapi::ConfigFromJson(printed, bp::mockapi::MockConfig{});
  if (!again.ok() || bp::mockapi::ConfigToJson(*again) != printed) __builtin_trap();
  return 0;
}
