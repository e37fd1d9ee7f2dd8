// One wording for a JSON syntax error in any file or body a user wrote
// (bpctl import, mockapi --config, loadgen --workload), with the position the
// parser stopped at, so a missing comma in a 200-line workload is found at
// once. Pure function, thread-safe.
#pragma once

#include <string>
#include <string_view>

namespace bp {

// For `text` that does not parse as JSON (RFC 8259, as nlohmann::json reads
// it): "not valid JSON at line L, column C: REASON", with L and C 1-based
// (the column counts bytes from the start of line L) and REASON the parser's
// own ("syntax error while parsing object key - unexpected end of input;
// expected string literal"). For text that parses: "". Callers put the file
// name in front ("bad.json: not valid JSON at line 3, column 1: ...").
std::string JsonSyntaxError(std::string_view text);

}  // namespace bp
