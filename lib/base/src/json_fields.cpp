// The JSON field reader's text side (json_fields.h): parsing with the
// position of a syntax error, files, and the wording of the checks.
// nlohmann::json reports the position only in its exception's text ("[json.
// exception.parse_error.101] parse error at line 1, column 22: REASON"), so
// text that fails is parsed once more with exceptions on and the part from
// "line" kept.
#include "bp/json_fields.h"

#include <filesystem>
#include <fstream>
#include <sstream>
#include <vector>

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

template <typename Json>
Result<Json> ParseJsonText(std::string_view text, JsonDuplicates duplicates) {
  if (text.find_first_not_of(" \t\r\n") == std::string_view::npos) {
    return Status::InvalidArgument("empty document (expected JSON)");
  }
  // One set of keys per open object: a repeated key is an error, where the
  // parser alone would keep the last value silently.
  std::vector<std::set<std::string>> open;
  std::string duplicate;
  auto callback = [&](int /*depth*/, typename Json::parse_event_t event, Json& parsed) {
    if (duplicates == JsonDuplicates::kAllow) return true;
    if (event == Json::parse_event_t::object_start) open.emplace_back();
    if (event == Json::parse_event_t::object_end && !open.empty()) open.pop_back();
    if (event == Json::parse_event_t::key && !open.empty() && duplicate.empty() &&
        !open.back().insert(parsed.template get<std::string>()).second) {
      duplicate = parsed.template get<std::string>();
    }
    return true;
  };
  Json j = Json::parse(text.begin(), text.end(), callback, /*allow_exceptions=*/false);
  if (j.is_discarded()) return Status::InvalidArgument(JsonSyntaxError(text));
  if (!duplicate.empty()) {
    return Status::InvalidArgument("duplicate key \"" + duplicate +
                                   "\" (each field may appear once)");
  }
  return j;
}

template <typename Json>
Result<Json> ReadJsonFile(const std::string& path, const std::string& what,
                          JsonDuplicates duplicates) {
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec)) {
    return Status::NotFound(path + ": is a directory, not a " + what + " file");
  }
  std::ifstream in(path, std::ios::binary);
  if (!in) return Status::NotFound(path + ": cannot read the " + what + " file");
  std::ostringstream text;
  text << in.rdbuf();
  auto j = ParseJsonText<Json>(text.str(), duplicates);
  if (!j.ok()) return WithPrefix(j.status(), path);
  return j;
}

template Result<nlohmann::json> ParseJsonText(std::string_view, JsonDuplicates);
template Result<nlohmann::ordered_json> ParseJsonText(std::string_view, JsonDuplicates);
template Result<nlohmann::json> ReadJsonFile(const std::string&, const std::string&,
                                             JsonDuplicates);
template Result<nlohmann::ordered_json> ReadJsonFile(const std::string&, const std::string&,
                                                     JsonDuplicates);

Status WithPrefix(const Status& s, const std::string& prefix) {
  if (s.ok()) return s;
  return Status(s.code(), prefix + ": " + s.message());
}

std::string IntRangeText(int64_t min, int64_t max) {
  return "must be an integer in [" + std::to_string(min) + ", " + std::to_string(max) + "]";
}

std::string NumberRangeText(const NumberRange& range) {
  if (std::isinf(range.max)) return "must be a finite number " + RangeText(range);
  return "must be a number in " + RangeText(range);
}

}  // namespace bp
