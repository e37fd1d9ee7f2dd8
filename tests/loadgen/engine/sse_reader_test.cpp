// SseReader and StreamReader (sse_reader.h): event framing over pieces of
// any size, comments and keep-alive lines, usage from the final chunk, and
// the content a stream cut short delivered.
#include "bp/loadgen/sse_reader.h"

#include <gtest/gtest.h>

#include <string>
#include <utility>
#include <vector>

namespace bp::loadgen {
namespace {

using Events = std::vector<std::pair<std::string, std::string>>;

Events Split(const std::vector<std::string>& pieces) {
  Events out;
  SseReader r([&](std::string_view n, std::string_view d) { out.emplace_back(n, d); });
  for (const auto& p : pieces) r.Feed(p);
  return out;
}

std::string Chunk(const std::string& content) {
  return "data: {\"object\":\"chat.completion.chunk\",\"choices\":[{\"index\":0,\"delta\":{"
         "\"content\":\"" +
         content + "\"},\"finish_reason\":null}],\"usage\":null}\n\n";
}

const char kUsage[] =
    "data: {\"object\":\"chat.completion.chunk\",\"choices\":[],\"usage\":{\"prompt_tokens\":"
    "100,\"completion_tokens\":3,\"total_tokens\":103}}\n\n";

TEST(SseReader, EventsSplitAtEveryByteAreTheSame) {
  const std::string text = "event: a\ndata: one\n\n: keep-alive\n\ndata: two\ndata: lines\n\n";
  const Events whole = Split({text});
  ASSERT_EQ(whole, (Events{{"a", "one"}, {"", "two\nlines"}}));
  std::vector<std::string> bytes;
  for (char c : text) bytes.emplace_back(1, c);
  EXPECT_EQ(Split(bytes), whole);
}

TEST(SseReader, CrLfAndCrEndLinesAndASplitCrLfIsOneEnd) {
  EXPECT_EQ(Split({"data: x\r\n\r\ndata: y\r\rdata: z\n\n"}),
            (Events{{"", "x"}, {"", "y"}, {"", "z"}}));
  // "\r" in one piece and "\n" in the next: one line end, not a blank line.
  EXPECT_EQ(Split({"data: a\r", "\ndata: b\r", "\n\r", "\n"}), (Events{{"", "a\nb"}}));
}

TEST(SseReader, CommentsAndFieldsWithoutDataDispatchNothing) {
  EXPECT_EQ(Split({":ping\n\n: another\n\nid: 7\nretry: 10\n\nevent: x\n\n"}), Events{});
  EXPECT_EQ(Split({"data\n\n"}), (Events{{"", ""}}));      // a field with no colon
  EXPECT_EQ(Split({"data:nospace\n\n"}), (Events{{"", "nospace"}}));
  EXPECT_EQ(Split({"data: unfinished"}), Events{});         // no blank line yet
}

TEST(StreamReader, OpenAIStreamGivesTokensUsageAndTimes) {
  StreamReader r;
  r.Feed("data: {\"choices\":[{\"index\":0,\"delta\":{\"role\":\"assistant\",\"content\":\"\"}}]}\n\n",
         10);
  r.Feed(Chunk("tok "), 25);  // first token at 25
  r.Feed(Chunk("tok ") + Chunk("tok "), 40);
  r.Feed(kUsage, 41);
  r.Feed("data: [DONE]\n\n", 41);
  const StreamStats& s = r.stats();
  EXPECT_EQ(s.token_events, 3);
  EXPECT_EQ(s.content_bytes, 12);
  EXPECT_EQ(s.tokens_received(), 3);
  EXPECT_EQ(s.first_token_us, 25);
  EXPECT_EQ(s.last_token_us, 40);
  EXPECT_EQ(s.prompt_tokens, 100);
  EXPECT_EQ(s.completion_tokens, 3);
  EXPECT_TRUE(s.done);
  EXPECT_EQ(s.malformed, 0);
}

TEST(StreamReader, EverythingAfterDoneIsIgnored) {
  StreamReader r;
  r.Feed(Chunk("tok ") + "data: [DONE]\n\n" + Chunk("tok ") + kUsage, 5);
  EXPECT_EQ(r.stats().token_events, 1);
  EXPECT_FALSE(r.stats().completion_tokens.has_value());
}

TEST(StreamReader, MissingUsageLeavesItUnsetAndCountsWhatArrived) {
  StreamReader r;
  r.Feed(Chunk("tok tok ") + Chunk("tok") + "data: [DONE]\n\n", 7);
  EXPECT_FALSE(r.stats().prompt_tokens.has_value());
  EXPECT_FALSE(r.stats().completion_tokens.has_value());
  EXPECT_EQ(r.stats().content_bytes, 11);
  EXPECT_EQ(r.stats().tokens_received(), 3);  // ceil(11 / 4)
}

TEST(StreamReader, MalformedDataIsCountedAndSkipped) {
  StreamReader r;
  r.Feed("data: {not json\n\ndata: [1,2]\n\n" + Chunk("tok "), 3);
  EXPECT_EQ(r.stats().malformed, 2);
  EXPECT_EQ(r.stats().token_events, 1);
  EXPECT_FALSE(r.stats().done);
}

TEST(StreamReader, AnthropicStreamGivesTokensAndUsage) {
  StreamReader r;
  r.Feed(
      "event: message_start\ndata: {\"type\":\"message_start\",\"message\":{\"usage\":{"
      "\"input_tokens\":20,\"output_tokens\":1}}}\n\n"
      "event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":0,"
      "\"delta\":{\"type\":\"text_delta\",\"text\":\"tok tok \"}}\n\n",
      4);
  r.Feed(
      "event: message_delta\ndata: {\"type\":\"message_delta\",\"usage\":{\"output_tokens\":2}}"
      "\n\nevent: message_stop\ndata: {\"type\":\"message_stop\"}\n\n",
      9);
  EXPECT_EQ(r.stats().token_events, 1);
  EXPECT_EQ(r.stats().first_token_us, 4);
  EXPECT_EQ(r.stats().prompt_tokens, 20);
  EXPECT_EQ(r.stats().completion_tokens, 2);
  EXPECT_TRUE(r.stats().done);
}

}  // namespace
}  // namespace bp::loadgen
