// libFuzzer target: loadgen's reader of streamed answers (sse_reader.h), the
// bytes of a text/event-stream body from the upstream. The input is fed in
// pieces whose sizes cycle through its first byte's bits, so line ends,
// "\r\n" pairs and JSON are split at arbitrary points; the same input fed
// whole must give the same stats (framing does not depend on the split).
// Built by scripts/fuzz.sh (BP_FUZZ=ON).
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "bp/loadgen/sse_reader.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  const uint8_t split = data[0];
  const std::string_view body(reinterpret_cast<const char*>(data + 1), size - 1);
  bp::loadgen::StreamReader whole, pieces;
  whole.Feed(body, 0);
  size_t at = 0;
  for (int i = 0; at < body.size(); ++i) {
    const size_t n = 1 + ((split >> (i % 8)) & 0x0f);
    pieces.Feed(body.substr(at, n), 0);
    at += n;
  }
  const auto& a = whole.stats();
  const auto& b = pieces.stats();
  if (a.token_events != b.token_events || a.content_bytes != b.content_bytes ||
      a.done != b.done || a.malformed != b.malformed || a.prompt_tokens != b.prompt_tokens ||
      a.completion_tokens != b.completion_tokens || a.tokens_received() < 0) {
    std::abort();
  }
  return 0;
}
