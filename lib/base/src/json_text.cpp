// JsonSyntaxError (json_text.h): nlohmann::json reports the position only in
// its exception's text ("[json.exception.parse_error.101] parse error at line
// 1, column 22: REASON"), so the text is parsed once more with exceptions on
// and the part from "line" kept.
#include "bp/json_text.h"

#include <nlohmann/json.hpp>

namespace bp {

std::string JsonSyntaxError(std::string_view text) {
  try {
    const nlohmann::json parsed = nlohmann::json::parse(text.begin(), text.end());
    (void)parsed;
  } catch (const nlohmann::json::exception& e) {
    const std::string what = e.what();
    const size_t at = what.find(" at line ");
    if (at != std::string::npos) return "not valid JSON" + what.substr(at);
    const size_t bracket = what.find("] ");
    return "not valid JSON: " + (bracket == std::string::npos ? what : what.substr(bracket + 2));
  }
  return "";
}

}  // namespace bp
