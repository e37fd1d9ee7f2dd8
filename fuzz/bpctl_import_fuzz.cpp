// libFuzzer target: the reader of a declared gate configuration that
// `bpctl import` and gate clients use (bp/gate_config_json.h): the file's
// text -> ParseGateConfigText -> GateConfigFromJson, as the import command
// does before it writes anything. An accepted configuration printed back
// (GateConfigToJson, what `bpctl export` prints) must read again to the same
// configuration and print to the same text.
// Built by scripts/fuzz.sh (BP_FUZZ=ON).
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "bp/gate_config_json.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  auto j = bp::ParseGateConfigText(std::string_view(reinterpret_cast<const char*>(data), size));
  if (!j.ok()) return 0;
  auto c = bp::GateConfigFromJson(*j);
  if (!c.ok()) return 0;
  const std::string printed = bp::GateConfigToJson(*c).dump();
  auto j2 = bp::ParseGateConfigText(printed);
  if (!j2.ok()) __builtin_trap();
  auto c2 = bp::GateConfigFromJson(*j2);
  if (!c2.ok() || bp::GateConfigToJson(*c2).dump() != printed) __builtin_trap();
  return 0;
}
