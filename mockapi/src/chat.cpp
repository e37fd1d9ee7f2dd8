// Chat requests in two dialects (OpenAI chat completions, Anthropic messages)
// and their answers, plain or streamed as server-sent events. The answer text
// is bp::TextOfTokens(completion_tokens), so its own estimate equals the usage.
#include <charconv>
#include <nlohmann/json.hpp>

#include "bp/token_estimate.h"
#include "internal.h"

namespace bp::mockapi::internal {
namespace {

using nlohmann::json;

Status Invalid(ChatCall* call, std::string param, std::string message) {
  call->error_param = std::move(param);
  return Status::InvalidArgument(std::move(message));
}

// Appends the text of a content value: a string, or an array of content
// parts, each an object with a string `type` (a "text" part's `text` must be
// a string). False on any other shape.
bool AppendContent(const json& content, std::string* out) {
  if (content.is_string()) {
    out->append(content.get_ref<const std::string&>());
    return true;
  }
  if (!content.is_array()) return false;
  for (const json& part : content) {
    if (!part.is_object()) return false;
    auto type = part.find("type");
    if (type == part.end() || !type->is_string()) return false;
    auto text = part.find("text");
    if (*type == "text" && (text == part.end() || !text->is_string())) return false;
    if (text != part.end() && text->is_string()) out->append(text->get_ref<const std::string&>());
  }
  return true;
}

// The roles each dialect accepts (OpenAI chat completions; Anthropic messages
// takes the system prompt as a top-level field, not as a role).
bool KnownRole(const std::string& role, bool anthropic) {
  if (anthropic) return role == "user" || role == "assistant";
  for (const char* r : {"system", "developer", "user", "assistant", "tool", "function"}) {
    if (role == r) return true;
  }
  return false;
}

// messages[i]: role known, content present (OpenAI lets an assistant message
// omit it, for tool calls) and of a valid shape. `param` is OpenAI's field path.
Status ParseMessage(const json& m, size_t i, bool anthropic, ChatCall* call) {
  const std::string at = "messages[" + std::to_string(i) + "]";
  const std::string at_a = "messages." + std::to_string(i);  // Anthropic's (pydantic) path
  if (!m.is_object()) {
    return Invalid(call, at,
                   anthropic ? at_a + ": Input should be a valid dictionary"
                             : "Invalid type for '" + at + "': expected an object.");
  }
  auto role = m.find("role");
  if (role == m.end() || !role->is_string()) {
    return Invalid(call, at + ".role",
                   anthropic ? at_a + ".role: Field required"
                             : "Missing required parameter: '" + at + ".role'.");
  }
  const std::string& role_name = role->get_ref<const std::string&>();
  if (!KnownRole(role_name, anthropic)) {
    std::string shown;
    AppendJsonString(&shown, role_name);
    return Invalid(call, at + ".role",
                   anthropic ? at_a + ".role: Input should be 'user' or 'assistant', got " + shown
                             : "Invalid value for '" + at + ".role': " + shown +
                                   ". Supported values are: 'system', 'developer', 'user', "
                                   "'assistant', 'tool' and 'function'.");
  }
  auto content = m.find("content");
  // OpenAI's assistant message may also send `"content": null` (with tool
  // calls); for every other message null is a wrong type, as at the provider.
  if (content != m.end() && content->is_null() && !anthropic && role_name == "assistant") {
    return Status::Ok();
  }
  if (content == m.end() && (anthropic || role_name != "assistant")) {
    return Invalid(call, at + ".content",
                   anthropic ? at_a + ".content: Field required"
                             : "Missing required parameter: '" + at + ".content'.");
  }
  if (content != m.end() && !AppendContent(*content, &call->prompt_text)) {
    return Invalid(call, at + ".content",
                   anthropic ? at_a +
                                   ".content: Input should be a valid string or a list of "
                                   "content blocks"
                             : "Invalid type for '" + at +
                                   ".content': expected a string or an array of content parts.");
  }
  return Status::Ok();
}

Status ParseCommon(const json& j, bool anthropic, ChatCall* call) {
  const char* kMaxTokens = "max_tokens";
  auto model = j.find("model");
  if (model == j.end() || !model->is_string() || model->get_ref<const std::string&>().empty()) {
    return Invalid(call, "model",
                   anthropic ? "model: Field required" : "you must provide a model parameter");
  }
  call->model = model->get<std::string>();
  auto max_tokens = j.find(kMaxTokens);
  if (!anthropic && max_tokens == j.end()) {
    kMaxTokens = "max_completion_tokens";
    max_tokens = j.find(kMaxTokens);
  }
  if (max_tokens != j.end() && !max_tokens->is_null()) {
    if (!max_tokens->is_number_integer()) {
      return Invalid(call, kMaxTokens,
                     std::string("Invalid type for '") + kMaxTokens + "': expected an integer.");
    }
    // Bounded so that prompt + max_tokens cannot overflow the cost (int64):
    // 2^63 - 1 was charged as a negative cost and admitted past any limit.
    constexpr uint64_t kMaxMaxTokens = uint64_t{1} << 53;
    if (max_tokens->is_number_unsigned() ? max_tokens->get<uint64_t>() > kMaxMaxTokens
                                         : max_tokens->get<int64_t>() > int64_t{1} << 53) {
      return Invalid(call, kMaxTokens,
                     std::string("Invalid '") + kMaxTokens +
                         "': integer above maximum value. Expected a value <= " +
                         std::to_string(kMaxMaxTokens) + ", but got " + max_tokens->dump() +
                         " instead.");
    }
    if (max_tokens->get<int64_t>() < 1) {
      return Invalid(call, kMaxTokens,
                     std::string("Invalid '") + kMaxTokens +
                         "': integer below minimum value. Expected a value >= 1, but got " +
                         max_tokens->dump() + " instead.");
    }
    call->max_tokens = max_tokens->get<int64_t>();
  } else if (anthropic) {
    return Invalid(call, "max_tokens", "max_tokens: Field required");
  }
  auto stream = j.find("stream");
  if (stream != j.end() && !stream->is_null()) {
    if (!stream->is_boolean())
      return Invalid(call, "stream", "Invalid type for 'stream': expected a boolean.");
    call->stream = stream->get<bool>();
  }
  if (anthropic) {
    auto system = j.find("system");
    if (system != j.end() && !AppendContent(*system, &call->prompt_text)) {
      return Invalid(call, "system",
                     "system: Input should be a valid string or a list of text blocks");
    }
  }
  auto messages = j.find("messages");
  if (messages == j.end()) {
    return Invalid(
        call, "messages",
        anthropic ? "messages: Field required" : "Missing required parameter: 'messages'.");
  }
  if (!messages->is_array() || messages->empty()) {
    return Invalid(call, "messages",
                   anthropic ? "messages: Input should be a non-empty list"
                             : "Invalid 'messages': expected a non-empty array of messages.");
  }
  for (size_t i = 0; i < messages->size(); ++i) {
    if (Status s = ParseMessage((*messages)[i], i, anthropic, call); !s.ok()) return s;
  }
  return Status::Ok();
}

Status Parse(std::string_view body, bool anthropic, ChatCall* call) {
  call->anthropic = anthropic;
  json j = json::parse(body.begin(), body.end(), nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded()) {
    return Invalid(call, "",
                   "We could not parse the JSON body of your request. The API expects a "
                   "JSON payload, but what was sent was not valid JSON.");
  }
  if (!j.is_object()) return Invalid(call, "", "Invalid request body: expected a JSON object.");
  if (Status s = ParseCommon(j, anthropic, call); !s.ok()) return s;
  if (!anthropic) {
    // Mistyped options are refused as OpenAI refuses them: accepting
    // `"include_usage": "yes"` would stream without usage and hide the
    // client's mistake until it met the real API. Unknown keys pass.
    auto options = j.find("stream_options");
    if (options != j.end() && !options->is_null()) {
      if (!options->is_object()) {
        return Invalid(call, "stream_options",
                       "Invalid type for 'stream_options': expected an object.");
      }
      auto usage = options->find("include_usage");
      if (usage != options->end() && !usage->is_null() && !usage->is_boolean()) {
        return Invalid(call, "stream_options.include_usage",
                       "Invalid type for 'stream_options.include_usage': expected a boolean.");
      }
      call->include_usage = usage != options->end() && usage->is_boolean() && usage->get<bool>();
    }
  }
  call->prompt_bytes = static_cast<int64_t>(call->prompt_text.size());
  return Status::Ok();
}

// Appends "PREFIX" + 16 hex digits of id, quoted.
void AppendId(std::string* b, const char* prefix, uint64_t id) {
  static constexpr char kHex[] = "0123456789abcdef";
  char buf[16];
  for (int i = 15; i >= 0; --i, id >>= 4) buf[i] = kHex[id & 0xf];
  b->push_back('"');
  b->append(prefix);
  b->append(buf, sizeof buf);
  b->push_back('"');
}

void AppendInt(std::string* b, int64_t v) {
  char buf[24];
  b->append(buf, std::to_chars(buf, buf + sizeof buf, v).ptr);
}

// bp::TextOfTokens(tokens), appended in place (no temporary string).
void AppendTextOfTokens(std::string* b, int64_t tokens) {
  for (int64_t i = 0; i < tokens; ++i) b->append("tok ", 4);
}

std::string OpenAIUsage(const Usage& u) {
  return "{\"prompt_tokens\":" + std::to_string(u.prompt_tokens) +
         ",\"completion_tokens\":" + std::to_string(u.completion_tokens) +
         ",\"total_tokens\":" + std::to_string(u.prompt_tokens + u.completion_tokens) + "}";
}

void OpenAIBody(const ChatCall& c, const Usage& u, uint64_t id, int64_t created_s, std::string* b) {
  b->reserve(320 + c.model.size() + static_cast<size_t>(u.completion_tokens) * 4);
  b->append("{\"id\":");
  AppendId(b, "chatcmpl-mock", id);
  b->append(",\"object\":\"chat.completion\",\"created\":");
  AppendInt(b, created_s);
  b->append(",\"model\":");
  AppendJsonString(b, c.model);
  b->append(",\"choices\":[{\"index\":0,\"message\":{\"role\":\"assistant\",\"content\":\"");
  AppendTextOfTokens(b, u.completion_tokens);  // plain ASCII, needs no escaping
  b->append("\",\"refusal\":null},\"logprobs\":null,\"finish_reason\":");
  b->append(u.truncated ? "\"length\"" : "\"stop\"");
  b->append("}],\"usage\":{\"prompt_tokens\":");
  AppendInt(b, u.prompt_tokens);
  b->append(",\"completion_tokens\":");
  AppendInt(b, u.completion_tokens);
  b->append(",\"total_tokens\":");
  AppendInt(b, u.prompt_tokens + u.completion_tokens);
  b->append("},\"system_fingerprint\":\"fp_mock\"}");
}

void OpenAIStream(const ChatCall& c, const Usage& u, uint64_t id, int64_t created_s,
                  std::string* b) {
  std::string head = "data: {\"id\":";
  AppendId(&head, "chatcmpl-mock", id);
  head += ",\"object\":\"chat.completion.chunk\",\"created\":" + std::to_string(created_s) +
          ",\"model\":";
  AppendJsonString(&head, c.model);
  head += ",\"system_fingerprint\":\"fp_mock\",\"choices\":";
  const char* tail = c.include_usage ? ",\"usage\":null}\n\n" : "}\n\n";
  // Each chunk: head, [{"index":0,"delta":DELTA,"logprobs":null,"finish_reason":F}], tail;
  // appended in place.
  auto open = [&] {
    b->append(head);
    b->append("[{\"index\":0,\"delta\":");
  };
  auto close = [&](const char* finish) {
    b->append(",\"logprobs\":null,\"finish_reason\":");
    b->append(finish);
    b->append("}]");
    b->append(tail);
  };
  // At most 64 content chunks; each carries a whole number of tokens.
  const int64_t per_chunk = std::max<int64_t>(1, (u.completion_tokens + 63) / 64);
  b->reserve(b->size() +
             (head.size() + 100) * static_cast<size_t>(u.completion_tokens / per_chunk + 4) +
             static_cast<size_t>(u.completion_tokens) * 4);
  open();
  b->append("{\"role\":\"assistant\",\"content\":\"\",\"refusal\":null}");
  close("null");
  for (int64_t sent = 0; sent < u.completion_tokens; sent += per_chunk) {
    open();
    b->append("{\"content\":\"");
    AppendTextOfTokens(b, std::min(per_chunk, u.completion_tokens - sent));
    b->append("\"}");
    close("null");
  }
  open();
  b->append("{}");
  close(u.truncated ? "\"length\"" : "\"stop\"");
  if (c.include_usage) *b += head + "[],\"usage\":" + OpenAIUsage(u) + "}\n\n";
  *b += "data: [DONE]\n\n";
}

void AnthropicBody(const ChatCall& c, const Usage& u, uint64_t id, std::string* b) {
  b->reserve(320 + c.model.size() + static_cast<size_t>(u.completion_tokens) * 4);
  b->append("{\"id\":");
  AppendId(b, "msg_mock", id);
  b->append(",\"type\":\"message\",\"role\":\"assistant\",\"model\":");
  AppendJsonString(b, c.model);
  b->append(",\"content\":[{\"type\":\"text\",\"text\":\"");
  AppendTextOfTokens(b, u.completion_tokens);
  b->append("\"}]");
  b->append(u.truncated ? ",\"stop_reason\":\"max_tokens\"" : ",\"stop_reason\":\"end_turn\"");
  b->append(",\"stop_sequence\":null,\"usage\":{\"input_tokens\":");
  AppendInt(b, u.prompt_tokens);
  b->append(",\"output_tokens\":");
  AppendInt(b, u.completion_tokens);
  b->append("}}");
}

void AnthropicStream(const ChatCall& c, const Usage& u, uint64_t id, std::string* b) {
  auto event = [b](const char* name, const std::string& data) {
    *b += std::string("event: ") + name + "\ndata: " + data + "\n\n";
  };
  std::string start = "{\"type\":\"message_start\",\"message\":{\"id\":";
  AppendId(&start, "msg_mock", id);
  start += ",\"type\":\"message\",\"role\":\"assistant\",\"model\":";
  AppendJsonString(&start, c.model);
  start +=
      ",\"content\":[],\"stop_reason\":null,\"stop_sequence\":null,\"usage\":{\"input_tokens\":" +
      std::to_string(u.prompt_tokens) + ",\"output_tokens\":1}}}";
  event("message_start", start);
  event("content_block_start",
        "{\"type\":\"content_block_start\",\"index\":0,\"content_block\":{\"type\":\"text\","
        "\"text\":\"\"}}");
  const int64_t per_chunk = std::max<int64_t>(1, (u.completion_tokens + 63) / 64);
  for (int64_t sent = 0; sent < u.completion_tokens; sent += per_chunk) {
    event("content_block_delta",
          "{\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"text_delta\","
          "\"text\":\"" +
              TextOfTokens(std::min(per_chunk, u.completion_tokens - sent)) + "\"}}");
  }
  event("content_block_stop", "{\"type\":\"content_block_stop\",\"index\":0}");
  event("message_delta", std::string("{\"type\":\"message_delta\",\"delta\":{\"stop_reason\":") +
                             (u.truncated ? "\"max_tokens\"" : "\"end_turn\"") +
                             ",\"stop_sequence\":null},\"usage\":{\"output_tokens\":" +
                             std::to_string(u.completion_tokens) + "}}");
  event("message_stop", "{\"type\":\"message_stop\"}");
}

}  // namespace

Status ParseChatCompletion(std::string_view body, ChatCall* call) {
  return Parse(body, false, call);
}
Status ParseMessages(std::string_view body, ChatCall* call) { return Parse(body, true, call); }

void SetCompletionBody(const ChatCall& call, const Usage& usage, uint64_t id, int64_t now_us,
                       HttpResponse* r) {
  r->status = 200;
  r->body.clear();
  if (call.stream) {
    r->content_type = "text/event-stream";
    r->headers.emplace_back("cache-control", "no-cache");
    if (call.anthropic) {
      AnthropicStream(call, usage, id, &r->body);
    } else {
      OpenAIStream(call, usage, id, now_us / 1'000'000, &r->body);
    }
    return;
  }
  r->content_type = "application/json";
  if (call.anthropic) {
    AnthropicBody(call, usage, id, &r->body);
  } else {
    OpenAIBody(call, usage, id, now_us / 1'000'000, &r->body);
  }
}

}  // namespace bp::mockapi::internal
