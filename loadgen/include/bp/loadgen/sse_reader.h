// The reader of a streamed chat answer: server-sent events (the WHATWG
// "event stream" format) fed in pieces of any size, interpreted as OpenAI
// chat.completion.chunk events or Anthropic message events.
//
// SseReader splits bytes into events: lines end in "\n", "\r\n" or "\r";
// a line starting with ":" is a comment (keep-alive); "data:" lines of one
// event are joined with "\n"; "event:" sets the event's name; a blank line
// dispatches the event; other fields (id, retry) are ignored. A line longer
// than kMaxLineBytes is cut there (its rest is dropped), so a hostile
// stream costs bounded memory.
//
// StreamReader feeds an SseReader and keeps what loadgen measures:
//   OpenAI    a chunk whose choices[0].delta.content is non-empty is a token
//             event; the chunk with a "usage" object (with
//             stream_options.include_usage, the last before "data: [DONE]",
//             its choices empty) gives the usage; "[DONE]" ends the stream.
//   Anthropic content_block_delta with delta.text is a token event;
//             message_start's message.usage.input_tokens and message_delta's
//             usage.output_tokens give the usage; message_stop ends it.
// The tokens received are EstimateTokens(all content bytes) (token_estimate.h:
// mockapi's text is 4 bytes a token, so this is exact against it); a stream
// cut short is charged with them. Times are whatever clock the caller passes
// (loadgen: run microseconds). Not thread-safe; one per stream.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>

namespace bp::loadgen {

class SseReader {
 public:
  static constexpr size_t kMaxLineBytes = 1 << 20;
  // Called once per dispatched event: its name ("" unless an event: line
  // set one) and its data (the data lines joined with "\n"). An event with
  // no data line is not dispatched.
  using OnEvent = std::function<void(std::string_view name, std::string_view data)>;
  explicit SseReader(OnEvent on_event) : on_event_(std::move(on_event)) {}
  void Feed(std::string_view bytes);

 private:
  void Line(std::string_view line);
  OnEvent on_event_;
  std::string line_;
  bool line_cut_ = false;
  bool after_cr_ = false;  // the last byte was "\r": a following "\n" ends nothing
  std::string name_, data_;
  bool has_data_ = false;
};

// What a stream delivered (StreamReader).
struct StreamStats {
  int64_t token_events = 0;    // events carrying content
  int64_t content_bytes = 0;   // bytes of content received
  int64_t first_token_us = -1; // time of the first token event (-1: none)
  int64_t last_token_us = -1;  // time of the last token event
  std::optional<int64_t> prompt_tokens, completion_tokens;  // usage, if sent
  bool done = false;           // [DONE] / message_stop seen
  int64_t malformed = 0;       // data that was not a JSON object
  // EstimateTokens of the content: what a stream cut short delivered.
  int64_t tokens_received() const;
};

class StreamReader {
 public:
  StreamReader();
  StreamReader(const StreamReader&) = delete;
  StreamReader& operator=(const StreamReader&) = delete;
  // Feeds bytes that arrived at `now_us`. Returns the stats so far.
  const StreamStats& Feed(std::string_view bytes, int64_t now_us);
  const StreamStats& stats() const { return stats_; }

 private:
  void OnEvent(std::string_view name, std::string_view data);
  SseReader sse_;
  StreamStats stats_;
  int64_t now_us_ = 0;
};

}  // namespace bp::loadgen
