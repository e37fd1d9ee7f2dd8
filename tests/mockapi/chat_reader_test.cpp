// FastReadChat (mockapi/src/chat_reader.cpp) against the full parser
// (ParseChatCompletion / ParseMessages on nlohmann::json): whenever the fast
// reader accepts a body, the full parser accepts it too with the same model,
// max_tokens, stream, include_usage and prompt byte count. Checked on a list
// of hand-written bodies (valid ones must take the fast path) and on every
// single-byte deletion plus seeded single-byte replacements and insertions of
// them (deterministic).
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "../../mockapi/src/internal.h"

namespace bp::mockapi::internal {
namespace {

struct Body {
  const char* text;
  bool anthropic;
  bool fast;  // the fast reader must accept it
};

const std::vector<Body>& Bodies() {
  static const std::vector<Body> bodies = {
      {R"({"model":"gpt-4o-mini","messages":[{"role":"user","content":"Say hello."}],"max_tokens":20})",
       false, true},
      {R"( { "model" : "m" , "messages" : [ { "role" : "system" , "content" : "a\"b\\c\n" } ,
          {"role":"user","content":[{"type":"text","text":"xy"},{"type":"image_url","image_url":{"url":"u"}}]},
          {"role":"assistant","content":null,"tool_calls":[{"id":"1","type":"function"}]},
          {"role":"assistant"}, {"role":"tool","content":"r","tool_call_id":"1"} ] ,
          "stream" : true , "stream_options" : {"include_usage":true,"x":[1,2.5,-3,null,false]} } )",
       false, true},
      {R"({"model":"m","messages":[{"role":"user","content":"hi"}],"max_completion_tokens":7,"stream":false})",
       false, true},
      {R"({"model":"m","messages":[{"role":"user","content":"hi"}],"max_tokens":null,"max_completion_tokens":7})",
       false, true},
      {R"({"model":"m","messages":[{"role":"developer","content":""}],"stream":null,"stream_options":null})",
       false, true},
      {R"({"model":"m","messages":[{"role":"user","content":"hi"}],"stream_options":{"include_usage":null}})",
       false, true},
      {R"({"model":"m","messages":[{"role":"user","content":"hi"}],"stream_options":{"include_usage":false}})",
       false, true},
      {R"({"model":"m","messages":[{"role":"user","content":"hi"}],"max_tokens":9007199254740992})",
       false, true},
      {R"({"model":"claude","max_tokens":5,"system":"be brief","messages":[{"role":"user","content":"hi"}]})",
       true, true},
      {R"({"model":"claude","max_tokens":5,"system":[{"type":"text","text":"s"}],"messages":[
          {"role":"user","content":[{"type":"text","text":"abc"},{"type":"image","source":{}}]},
          {"role":"assistant","content":"ok"}],"stream":true,"metadata":{"user_id":"u"}})",
       true, true},
      {R"({"model":"m\/x\t","messages":[{"role":"user","content":"a"}]})", false, true},
      // Bodies the full parser rejects (the fast reader must decline them).
      {R"({"model":"m","messages":[{"role":"user","content":"hi"}],"max_tokens":9007199254740993})",
       false, false},
      {R"({"model":"m","messages":[{"role":"user","content":"hi"}],"max_tokens":0})", false, false},
      {R"({"model":"m","messages":[{"role":"user","content":"hi"}],"max_tokens":2.0})", false,
       false},
      {R"({"model":"m","messages":[{"role":"user","content":"hi"}],"max_tokens":"2"})", false,
       false},
      {R"({"model":"","messages":[{"role":"user","content":"hi"}]})", false, false},
      {R"({"messages":[{"role":"user","content":"hi"}]})", false, false},
      {R"({"model":"m","messages":[]})", false, false},
      {R"({"model":"m","messages":{}})", false, false},
      {R"({"model":"m","messages":[{"role":"robot","content":"hi"}]})", false, false},
      {R"({"model":"m","messages":[{"role":"user"}]})", false, false},
      {R"({"model":"m","messages":[{"role":"user","content":null}]})", false, false},
      {R"({"model":"m","messages":[{"role":"user","content":5}]})", false, false},
      {R"({"model":"m","messages":[{"role":"user","content":[{"text":"a"}]}]})", false, false},
      {R"({"model":"m","messages":[{"role":"user","content":[{"type":"text"}]}]})", false, false},
      {R"({"model":"m","messages":[{"role":"user","content":"hi"}],"stream":"yes"})", false, false},
      {R"({"model":"m","messages":[{"role":"user","content":"hi"}],"stream_options":5})", false,
       false},
      {R"({"model":"m","messages":[{"role":"user","content":"hi"}],"stream_options":{"include_usage":1}})",
       false, false},
      {R"({"model":"m","messages":[{"role":"system","content":"hi"}],"max_tokens":3})", true,
       false},
      {R"({"model":"m","messages":[{"role":"user","content":"hi"}]})", true, false},
      {R"({"model":"m","max_tokens":3,"system":null,"messages":[{"role":"user","content":"hi"}]})",
       true, false},
      {R"({"model":"m","max_tokens":3,"messages":[{"role":"assistant","content":null}]})", true,
       false},
      {R"({"model":"m","messages":[{"role":"user","content":"hi"}]} x)", false, false},
      {R"({"model":"m","messages":[{"role":"user","content":"hi"}],})", false, false},
      {R"({"model":"m","messages":[{"role":"user","content":"hi"}],"x":1e999})", false, false},
      {R"([1,2])", false, false},
      {"", false, false},
      // Valid, but outside the fast reader's subset.
      {R"({"model":"m","messages":[{"role":"user","content":"caf\u00e9"}]})", false, false},
      {R"({"model":"m","messages":[{"role":"user","content":"hi"}],"model":"n"})", false, false},
      {R"({"model":"m","messages":[{"role":"user","content":"hi"}],"x":1e3})", false, false},
  };
  return bodies;
}

// The fast reader's verdict must never contradict the full parser's.
void Agree(const std::string& body, bool anthropic) {
  ChatCall fast, full;
  const bool took = FastReadChat(body, anthropic, &fast);
  const Status st = anthropic ? ParseMessages(body, &full) : ParseChatCompletion(body, &full);
  if (!took) return;
  ASSERT_TRUE(st.ok()) << "fast reader accepted a body the full parser rejects (" << st.message()
                       << "): " << body;
  EXPECT_EQ(fast.model, full.model) << body;
  EXPECT_EQ(fast.max_tokens, full.max_tokens) << body;
  EXPECT_EQ(fast.stream, full.stream) << body;
  EXPECT_EQ(fast.include_usage, full.include_usage) << body;
  EXPECT_EQ(fast.prompt_bytes, full.prompt_bytes) << body;
  EXPECT_EQ(fast.prompt_bytes, static_cast<int64_t>(full.prompt_text.size())) << body;
  EXPECT_EQ(fast.anthropic, anthropic);
}

TEST(ChatReader, TakesTheFastPathExactlyWhenExpected) {
  for (const Body& b : Bodies()) {
    ChatCall call;
    EXPECT_EQ(FastReadChat(b.text, b.anthropic, &call), b.fast) << b.text;
    Agree(b.text, b.anthropic);
  }
}

TEST(ChatReader, ReadsTheFieldsTheCostModelNeeds) {
  ChatCall call;
  ASSERT_TRUE(FastReadChat(Bodies()[1].text, false, &call));
  EXPECT_EQ(call.model, "m");
  EXPECT_EQ(call.max_tokens, 0);
  EXPECT_TRUE(call.stream);
  EXPECT_TRUE(call.include_usage);
  EXPECT_EQ(call.prompt_bytes, 6 + 2 + 1);  // a"b\c<LF> + xy + r
  ChatCall anthropic;
  ASSERT_TRUE(FastReadChat(Bodies()[9].text, true, &anthropic));
  EXPECT_EQ(anthropic.max_tokens, 5);
  EXPECT_EQ(anthropic.prompt_bytes, 1 + 3 + 2);
  ChatCall completion;
  ASSERT_TRUE(FastReadChat(Bodies()[2].text, false, &completion));
  EXPECT_EQ(completion.max_tokens, 7);
  ChatCall null_max;  // max_tokens null: max_completion_tokens is not read
  ASSERT_TRUE(FastReadChat(Bodies()[3].text, false, &null_max));
  EXPECT_EQ(null_max.max_tokens, 0);
  ChatCall escaped;
  ASSERT_TRUE(FastReadChat(Bodies()[10].text, false, &escaped));
  EXPECT_EQ(escaped.model, "m/x\t");
}

uint64_t Mix(uint64_t x) {  // splitmix64
  x += 0x9e3779b97f4a7c15ULL;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

TEST(ChatReader, AgreesWithTheFullParserOnMutatedBodies) {
  static const char kBytes[] =
      "{}[]\":,\\ntfeu0123456789-.+ \t\xc3\x80"
      "aA";
  int fast_taken = 0, checked = 0;
  for (const Body& b : Bodies()) {
    const std::string base = b.text;
    for (size_t i = 0; i < base.size(); ++i) {
      std::string deleted = base;
      deleted.erase(i, 1);
      Agree(deleted, b.anthropic);
      for (int k = 0; k < 3; ++k) {
        const char c = kBytes[Mix(i * 7919 + static_cast<uint64_t>(k)) % (sizeof kBytes - 1)];
        std::string replaced = base, inserted = base;
        replaced[i] = c;
        inserted.insert(i, 1, c);
        Agree(replaced, b.anthropic);
        Agree(inserted, b.anthropic);
        ChatCall call;
        fast_taken += FastReadChat(replaced, b.anthropic, &call) ? 1 : 0;
        checked += 3;
      }
      if (HasFatalFailure()) return;
    }
  }
  EXPECT_GT(checked, 10000);
  EXPECT_GT(fast_taken, 100);  // mutations the fast reader took were compared, not only declined
}

}  // namespace
}  // namespace bp::mockapi::internal
