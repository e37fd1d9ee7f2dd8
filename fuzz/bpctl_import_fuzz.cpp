// libFuzzer target: `bpctl import`'s reader of a declared gate configuration
// (config_json.h): the file's text -> ParseConfigText -> ConfigFromJson, as
// the import command does before it writes anything. An accepted
// configuration printed back (ConfigToJson, what `bpctl export` prints) must
// read again to the same configuration and print to the same text.
// Built by scripts/fuzz.sh (BP_FUZZ=ON).
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "bp/bpctl/config_json.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  auto j = bp::bpctl::ParseConfigText(std::string_view(reinterpret_cast<const char*>(data), size));
  if (!j.ok()) return 0;
  auto c = bp::bpctl::ConfigFromJson(*j);
  if (!c.ok()) return 0;
  const std::string printed = bp::bpctl::ConfigToJson(*c).dump();
  auto j2 = bp::bpctl::ParseConfigText(printed);
  if (!j2.ok()) __builtin_trap();
  auto c2 = bp::bpctl::ConfigFromJson(*j2);
  if (!c2.ok() || bp::bpctl::ConfigToJson(*c2).dump() != printed) __builtin_trap();
  return 0;
}
