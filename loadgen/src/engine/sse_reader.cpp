// Server-sent events and the streamed chat answers in them (sse_reader.h).
#include "bp/loadgen/sse_reader.h"

#include <nlohmann/json.hpp>

#include "bp/token_estimate.h"

namespace bp::loadgen {

void SseReader::Feed(std::string_view bytes) {
  for (char c : bytes) {
    if (c == '\n' && after_cr_) {  // the "\n" of a "\r\n"
      after_cr_ = false;
      continue;
    }
    after_cr_ = c == '\r';
    if (c == '\n' || c == '\r') {
      Line(line_);
      line_.clear();
      line_cut_ = false;
      continue;
    }
    if (line_.size() >= kMaxLineBytes) {
      line_cut_ = true;
      continue;
    }
    line_.push_back(c);
  }
}

void SseReader::Line(std::string_view line) {
  if (line.empty()) {  // a blank line dispatches the event
    if (has_data_) on_event_(name_, data_);
    name_.clear();
    data_.clear();
    has_data_ = false;
    return;
  }
  if (line.front() == ':') return;  // a comment: keep-alive
  const size_t colon = line.find(':');
  const std::string_view field = line.substr(0, colon);
  std::string_view value = colon == std::string_view::npos ? std::string_view{} : line.substr(colon + 1);
  if (!value.empty() && value.front() == ' ') value.remove_prefix(1);
  if (field == "data") {
    if (has_data_) data_.push_back('\n');
    data_.append(value);
    has_data_ = true;
  } else if (field == "event") {
    name_.assign(value);
  }
}

int64_t StreamStats::tokens_received() const {
  return (content_bytes + kBytesPerToken - 1) / kBytesPerToken;
}

StreamReader::StreamReader()
    : sse_([this](std::string_view name, std::string_view data) { OnEvent(name, data); }) {}

const StreamStats& StreamReader::Feed(std::string_view bytes, int64_t now_us) {
  now_us_ = now_us;
  sse_.Feed(bytes);
  return stats_;
}

namespace {

using nlohmann::json;

std::optional<int64_t> Count(const json& object, const char* key) {
  if (!object.is_object()) return std::nullopt;
  auto it = object.find(key);
  if (it == object.end() || !it->is_number_integer()) return std::nullopt;
  const auto v = it->get<int64_t>();
  if (v < 0) return std::nullopt;
  return v;
}

const json* Member(const json& object, const char* key) {
  if (!object.is_object()) return nullptr;
  auto it = object.find(key);
  return it == object.end() ? nullptr : &*it;
}

}  // namespace

void StreamReader::OnEvent(std::string_view name, std::string_view data) {
  if (stats_.done) return;
  if (data == "[DONE]") {
    stats_.done = true;
    return;
  }
  const json doc = json::parse(data, nullptr, /*allow_exceptions=*/false);
  if (!doc.is_object()) {
    ++stats_.malformed;
    return;
  }
  std::string_view text;
  const json* type = Member(doc, "type");
  const std::string_view kind =
      type && type->is_string() ? std::string_view(type->get_ref<const std::string&>()) : name;
  if (kind == "content_block_delta") {  // Anthropic
    const json* delta = Member(doc, "delta");
    const json* t = delta ? Member(*delta, "text") : nullptr;
    if (t && t->is_string()) text = t->get_ref<const std::string&>();
  } else if (kind == "message_start") {
    const json* message = Member(doc, "message");
    if (const json* usage = message ? Member(*message, "usage") : nullptr) {
      if (auto n = Count(*usage, "input_tokens")) stats_.prompt_tokens = n;
    }
  } else if (kind == "message_delta") {
    if (const json* usage = Member(doc, "usage")) {
      if (auto n = Count(*usage, "output_tokens")) stats_.completion_tokens = n;
    }
  } else if (kind == "message_stop") {
    stats_.done = true;
  } else {  // OpenAI chat.completion.chunk
    const json* choices = Member(doc, "choices");
    if (choices && choices->is_array() && !choices->empty()) {
      const json* delta = Member((*choices)[0], "delta");
      const json* content = delta ? Member(*delta, "content") : nullptr;
      if (content && content->is_string()) text = content->get_ref<const std::string&>();
    }
    const json* usage = Member(doc, "usage");
    if (usage && usage->is_object()) {
      stats_.prompt_tokens = Count(*usage, "prompt_tokens");
      stats_.completion_tokens = Count(*usage, "completion_tokens");
    }
  }
  if (text.empty()) return;
  ++stats_.token_events;
  stats_.content_bytes += static_cast<int64_t>(text.size());
  if (stats_.first_token_us < 0) stats_.first_token_us = now_us_;
  stats_.last_token_us = now_us_;
}

}  // namespace bp::loadgen
