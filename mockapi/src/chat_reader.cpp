// FastReadChat: one pass over a chat request body that reads only what the
// cost model needs (model, max_tokens, stream, include_usage, the byte count
// of the prompt text), with no DOM and no allocation beyond the model name.
// It accepts exactly the bodies the full parser (chat.cpp, nlohmann::json)
// accepts with the same ChatCall, and declines everything else: malformed
// JSON, any body the full parser answers with a 400, and, to stay simple,
// \u escapes, non-ASCII bytes, exponents, deep nesting and repeated keys
// among the fields it reads. Declined bodies go to the full parser, which
// gives the provider-shaped error, so no message changes.
// tests/mockapi/chat_reader_test.cpp checks both parsers agree.
#include <cstring>

#include "internal.h"

namespace bp::mockapi::internal {
namespace {

constexpr int kMaxDepth = 32;
constexpr size_t kMaxNumberChars = 300;  // beyond, nlohmann may overflow to inf (an error)

class Reader {
 public:
  explicit Reader(std::string_view s) : p_(s.data()), end_(s.data() + s.size()) {}

  void Ws() {
    while (p_ < end_ && (*p_ == ' ' || *p_ == '\n' || *p_ == '\r' || *p_ == '\t')) ++p_;
  }
  bool AtEnd() {
    Ws();
    return p_ == end_;
  }
  // Consumes `c` after whitespace.
  bool Eat(char c) {
    Ws();
    if (p_ < end_ && *p_ == c) {
      ++p_;
      return true;
    }
    return false;
  }
  char Peek() {
    Ws();
    return p_ < end_ ? *p_ : '\0';
  }

  // A string at the cursor: its raw text between the quotes, its decoded
  // length, and whether it has (simple) escapes. False for \u escapes,
  // bytes >= 0x80, control characters, bad escapes or no closing quote.
  bool String(std::string_view* raw, size_t* decoded, bool* escaped) {
    if (!Eat('"')) return false;
    const char* start = p_;
    size_t escapes = 0;
    while (p_ < end_) {
      const auto c = static_cast<unsigned char>(*p_);
      if (c == '"') {
        *raw = std::string_view(start, static_cast<size_t>(p_ - start));
        *decoded = raw->size() - escapes;
        *escaped = escapes > 0;
        ++p_;
        return true;
      }
      if (c < 0x20 || c >= 0x80) return false;
      if (c == '\\') {
        if (p_ + 1 >= end_ || std::strchr("\"\\/bfnrt", p_[1]) == nullptr || p_[1] == '\0')
          return false;
        ++escapes;
        p_ += 2;
        continue;
      }
      ++p_;
    }
    return false;
  }
  // A string without escapes (keys, roles, part types).
  bool PlainString(std::string_view* s) {
    size_t n = 0;
    bool escaped = false;
    return String(s, &n, &escaped) && !escaped;
  }
  // A number with no exponent; `*integer` when it has no sign, fraction or
  // leading zero and at most 16 digits, with its value in `*value`.
  bool Number(bool* integer, int64_t* value) {
    Ws();
    const char* start = p_;
    if (p_ < end_ && *p_ == '-') ++p_;
    const char* digits = p_;
    if (p_ < end_ && *p_ == '0') {
      ++p_;
    } else if (p_ < end_ && *p_ >= '1' && *p_ <= '9') {
      while (p_ < end_ && *p_ >= '0' && *p_ <= '9') ++p_;
    } else {
      return false;
    }
    const char* int_end = p_;
    bool fraction = false;
    if (p_ < end_ && *p_ == '.') {
      ++p_;
      if (p_ >= end_ || *p_ < '0' || *p_ > '9') return false;
      while (p_ < end_ && *p_ >= '0' && *p_ <= '9') ++p_;
      fraction = true;
    }
    if (p_ < end_ && (*p_ == 'e' || *p_ == 'E')) return false;  // left to the full parser
    if (static_cast<size_t>(p_ - start) > kMaxNumberChars) return false;
    *integer = !fraction && digits == start && *digits != '0' && int_end - digits <= 16;
    *value = 0;
    if (*integer) {
      for (const char* d = digits; d < int_end; ++d) *value = *value * 10 + (*d - '0');
    }
    return true;
  }
  bool Literal(const char* word) {
    Ws();
    const size_t n = std::strlen(word);
    if (static_cast<size_t>(end_ - p_) < n || std::memcmp(p_, word, n) != 0) return false;
    p_ += n;
    return true;
  }
  // Any valid JSON value, discarded.
  bool Skip(int depth) {
    if (depth > kMaxDepth) return false;
    switch (Peek()) {
      case '"': {
        std::string_view s;
        size_t n;
        bool e;
        return String(&s, &n, &e);
      }
      case '{':
        ++p_;
        if (Eat('}')) return true;
        do {
          std::string_view key;
          size_t n;
          bool e;
          if (!String(&key, &n, &e) || !Eat(':') || !Skip(depth + 1)) return false;
        } while (Eat(','));
        return Eat('}');
      case '[':
        ++p_;
        if (Eat(']')) return true;
        do {
          if (!Skip(depth + 1)) return false;
        } while (Eat(','));
        return Eat(']');
      case 't':
        return Literal("true");
      case 'f':
        return Literal("false");
      case 'n':
        return Literal("null");
      default: {
        bool integer;
        int64_t v;
        return Number(&integer, &v);
      }
    }
  }

 private:
  const char* p_;
  const char* end_;
};

// Decodes a string's simple escapes (Reader::String accepted it).
std::string Unescape(std::string_view raw) {
  std::string out;
  out.reserve(raw.size());
  for (size_t i = 0; i < raw.size(); ++i) {
    if (raw[i] != '\\') {
      out.push_back(raw[i]);
      continue;
    }
    const char e = raw[++i];
    out.push_back(e == 'b'   ? '\b'
                  : e == 'f' ? '\f'
                  : e == 'n' ? '\n'
                  : e == 'r' ? '\r'
                  : e == 't' ? '\t'
                             : e);
  }
  return out;
}

// AppendContent's rules (chat.cpp): a string, or an array of objects each
// with a string `type`, a "text" part with a string `text`; the byte count
// of all string `text`s is added to *bytes.
bool Content(Reader& r, int64_t* bytes) {
  if (r.Peek() == '"') {
    std::string_view s;
    size_t n;
    bool e;
    if (!r.String(&s, &n, &e)) return false;
    *bytes += static_cast<int64_t>(n);
    return true;
  }
  if (!r.Eat('[')) return false;
  if (r.Eat(']')) return true;
  do {
    if (!r.Eat('{')) return false;
    bool has_type = false, is_text = false, has_text = false;
    int64_t text_bytes = 0;
    if (!r.Eat('}')) {
      do {
        std::string_view key;
        if (!r.PlainString(&key) || !r.Eat(':')) return false;
        if (key == "type" || key == "text") {
          if (key == "type" ? has_type : has_text) return false;  // repeated
          if (r.Peek() != '"') return false;  // not a string: an error either way
          std::string_view s;
          size_t n;
          bool e;
          if (!r.String(&s, &n, &e)) return false;
          if (key == "type") {
            if (e) return false;
            has_type = true;
            is_text = s == "text";
          } else {
            has_text = true;
            text_bytes = static_cast<int64_t>(n);
          }
        } else if (!r.Skip(3)) {
          return false;
        }
      } while (r.Eat(','));
      if (!r.Eat('}')) return false;
    }
    if (!has_type || (is_text && !has_text)) return false;
    *bytes += text_bytes;
  } while (r.Eat(','));
  return r.Eat(']');
}

bool KnownRole(std::string_view role, bool anthropic) {
  if (anthropic) return role == "user" || role == "assistant";
  return role == "system" || role == "developer" || role == "user" || role == "assistant" ||
         role == "tool" || role == "function";
}

// One element of `messages` (ParseMessage's rules), its text bytes to *bytes.
bool Message(Reader& r, bool anthropic, int64_t* bytes) {
  if (!r.Eat('{')) return false;
  std::string_view role;
  bool has_role = false, has_content = false, null_content = false;
  int64_t content_bytes = 0;
  if (!r.Eat('}')) {
    do {
      std::string_view key;
      if (!r.PlainString(&key) || !r.Eat(':')) return false;
      if (key == "role") {
        if (has_role || !r.PlainString(&role)) return false;
        has_role = true;
      } else if (key == "content") {
        if (has_content) return false;
        has_content = true;
        if (r.Peek() == 'n') {
          if (!r.Literal("null")) return false;
          null_content = true;
        } else if (!Content(r, &content_bytes)) {
          return false;
        }
      } else if (!r.Skip(2)) {
        return false;
      }
    } while (r.Eat(','));
    if (!r.Eat('}')) return false;
  }
  if (!has_role || !KnownRole(role, anthropic)) return false;
  const bool may_omit = !anthropic && role == "assistant";  // OpenAI tool-call turns
  if ((!has_content || null_content) && !may_omit) return false;
  *bytes += content_bytes;
  return true;
}

// max_tokens / max_completion_tokens: an integer in [1, 2^53], or null.
bool MaxTokens(Reader& r, bool* is_null, int64_t* value) {
  if (r.Peek() == 'n') {
    *is_null = true;
    return r.Literal("null");
  }
  bool integer = false;
  return r.Number(&integer, value) && integer && *value >= 1 && *value <= (int64_t{1} << 53);
}

}  // namespace

bool FastReadChat(std::string_view body, bool anthropic, ChatCall* call) {
  Reader r(body);
  if (!r.Eat('{')) return false;
  enum : unsigned {
    kModel = 1,
    kMax = 2,
    kMaxCompletion = 4,
    kStream = 8,
    kMessages = 16,
    kSystem = 32,
    kOptions = 64
  };
  unsigned seen = 0;
  auto first = [&seen](unsigned bit) {
    const bool fresh = (seen & bit) == 0;
    seen |= bit;
    return fresh;
  };
  std::string_view model;
  bool model_escaped = false;
  bool max_null = false, max_completion_null = false;
  int64_t max_tokens = 0, max_completion_tokens = 0, bytes = 0;
  bool stream = false, include_usage = false;
  if (!r.Eat('}')) {
    do {
      std::string_view key;
      if (!r.PlainString(&key) || !r.Eat(':')) return false;
      if (key == "model") {
        size_t n;
        if (!first(kModel) || !r.String(&model, &n, &model_escaped) || n == 0) return false;
      } else if (key == "max_tokens") {
        if (!first(kMax) || !MaxTokens(r, &max_null, &max_tokens)) return false;
      } else if (key == "max_completion_tokens" && !anthropic) {
        if (!first(kMaxCompletion) || !MaxTokens(r, &max_completion_null, &max_completion_tokens))
          return false;
      } else if (key == "stream") {
        if (!first(kStream)) return false;
        if (r.Literal("true")) {
          stream = true;
        } else if (!r.Literal("false") && !r.Literal("null")) {
          return false;
        }
      } else if (key == "messages") {
        if (!first(kMessages) || !r.Eat('[') || r.Eat(']')) return false;  // non-empty array
        do {
          if (!Message(r, anthropic, &bytes)) return false;
        } while (r.Eat(','));
        if (!r.Eat(']')) return false;
      } else if (key == "system" && anthropic) {
        if (!first(kSystem) || !Content(r, &bytes)) return false;
      } else if (key == "stream_options" && !anthropic && r.Peek() != '{') {
        if (!first(kOptions) || !r.Literal("null")) return false;  // else mistyped: a 400
      } else if (key == "stream_options" && !anthropic) {
        if (!first(kOptions)) return false;
        r.Eat('{');
        bool seen_usage = false;
        if (!r.Eat('}')) {
          do {
            std::string_view option;
            if (!r.PlainString(&option) || !r.Eat(':')) return false;
            if (option == "include_usage") {
              if (seen_usage) return false;
              seen_usage = true;
              include_usage = r.Literal("true");
              if (!include_usage && !r.Literal("false") && !r.Literal("null")) return false;
            } else if (!r.Skip(2)) {
              return false;
            }
          } while (r.Eat(','));
          if (!r.Eat('}')) return false;
        }
      } else if (!r.Skip(1)) {
        return false;
      }
    } while (r.Eat(','));
    if (!r.Eat('}')) return false;
  }
  if (!r.AtEnd()) return false;
  if ((seen & kModel) == 0 || (seen & kMessages) == 0) return false;
  // OpenAI reads max_completion_tokens only when max_tokens is absent.
  if (anthropic && ((seen & kMax) == 0 || max_null)) return false;
  const bool use_completion = !anthropic && (seen & kMax) == 0;
  call->anthropic = anthropic;
  call->model = model_escaped ? Unescape(model) : std::string(model);
  call->max_tokens =
      use_completion ? ((seen & kMaxCompletion) && !max_completion_null ? max_completion_tokens : 0)
                     : (max_null ? 0 : max_tokens);
  call->stream = stream;
  call->include_usage = include_usage;
  call->prompt_bytes = bytes;
  return true;
}

}  // namespace bp::mockapi::internal
