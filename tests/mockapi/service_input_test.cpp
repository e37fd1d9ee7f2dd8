// Service on a FakeClock: malformed or mistyped requests get provider-shaped
// 400s naming the field (param), never a crash. No sockets.
#include <gtest/gtest.h>

#include "bp/mockapi/service.h"
#include "service_fixture.h"

namespace bp::mockapi {
namespace {

using namespace bp::mockapi::testing;  // NOLINT(build/namespaces): the fixture
using nlohmann::json;

TEST_F(ServiceTest, MalformedInputIsAProviderShaped400) {
  MockConfig c;
  c.limits = {Limit(Dimension::kRequests, LimiterAlgorithm::kFixedWindow, 5, 60)};
  Start(c);
  struct Case {
    std::string body, message, param;
  };
  const std::vector<Case> cases = {
      {"{bad",
       "We could not parse the JSON body of your request. The API expects a JSON payload, but what "
       "was sent was not valid JSON.",
       ""},
      {"[1]", "Invalid request body: expected a JSON object.", ""},
      {R"({"messages":[{"role":"user","content":"x"}]})", "you must provide a model parameter",
       "model"},
      {R"({"model":"m"})", "Missing required parameter: 'messages'.", "messages"},
      {R"({"model":"m","messages":[]})",
       "Invalid 'messages': expected a non-empty array of messages.", "messages"},
      {R"({"model":"m","messages":[{"content":"x"}]})",
       "Missing required parameter: 'messages[0].role'.", "messages[0].role"},
      {R"({"model":"m","messages":[{"role":"user","content":5}]})",
       "Invalid type for 'messages[0].content': expected a string or an array of content parts.",
       "messages[0].content"},
      {R"({"model":"m","messages":[{"role":"user"}]})",
       "Missing required parameter: 'messages[0].content'.", "messages[0].content"},
      {R"({"model":"m","messages":[{"role":"user","content":"x"},{"role":"robot","content":"y"}]})",
       "Invalid value for 'messages[1].role': \"robot\". Supported values are: 'system', "
       "'developer', 'user', 'assistant', 'tool' and 'function'.",
       "messages[1].role"},
      {R"({"model":"m","messages":[{"role":"user","content":{"text":"x"}}]})",
       "Invalid type for 'messages[0].content': expected a string or an array of content parts.",
       "messages[0].content"},
      {R"({"model":"m","messages":[{"role":"user","content":["x"]}]})",
       "Invalid type for 'messages[0].content': expected a string or an array of content parts.",
       "messages[0].content"},
      {R"({"model":"m","messages":[{"role":"user","content":[{"type":"text","text":7}]}]})",
       "Invalid type for 'messages[0].content': expected a string or an array of content parts.",
       "messages[0].content"},
      {R"({"model":"m","messages":[{"role":"user","content":null}]})",
       "Invalid type for 'messages[0].content': expected a string or an array of content parts.",
       "messages[0].content"},
      {R"({"model":"m","messages":[{"role":"tool","content":null}]})",
       "Invalid type for 'messages[0].content': expected a string or an array of content parts.",
       "messages[0].content"},
      {R"({"model":"m","messages":[{"role":"user","content":"x"}],"max_tokens":0})",
       "Invalid 'max_tokens': integer below minimum value. Expected a value >= 1, but got 0 "
       "instead.",
       "max_tokens"},
      // Above 2^53: 2^63 - 1 overflowed prompt + max_tokens and was admitted.
      {R"({"model":"m","messages":[{"role":"user","content":"x"}],"max_tokens":9223372036854775807})",
       "Invalid 'max_tokens': integer above maximum value. Expected a value <= 9007199254740992, "
       "but got 9223372036854775807 instead.",
       "max_tokens"},
      {R"({"model":"m","messages":[{"role":"user","content":"x"}],"max_tokens":18446744073709551615})",
       "Invalid 'max_tokens': integer above maximum value. Expected a value <= 9007199254740992, "
       "but got 18446744073709551615 instead.",
       "max_tokens"},
      {R"({"model":"m","messages":[{"role":"user","content":"x"}],"stream":"yes"})",
       "Invalid type for 'stream': expected a boolean.", "stream"},
      // Mistyped stream options: silently streaming without usage would hide
      // the client's mistake.
      {R"({"model":"m","messages":[{"role":"user","content":"x"}],"stream":true,"stream_options":"x"})",
       "Invalid type for 'stream_options': expected an object.", "stream_options"},
      {R"({"model":"m","messages":[{"role":"user","content":"x"}],"stream_options":5})",
       "Invalid type for 'stream_options': expected an object.", "stream_options"},
      {R"({"model":"m","messages":[{"role":"user","content":"x"}],"stream":true,)"
       R"("stream_options":{"include_usage":"yes"}})",
       "Invalid type for 'stream_options.include_usage': expected a boolean.",
       "stream_options.include_usage"},
  };
  for (const Case& k : cases) {
    HttpResponse r = Post("/v1/chat/completions", k.body);
    EXPECT_EQ(r.status, 400) << k.body;
    const json err = json::parse(r.body);
    EXPECT_EQ(err["error"]["message"], k.message) << k.body;
    EXPECT_EQ(err["error"]["type"], "invalid_request_error");
    EXPECT_EQ(err["error"]["param"], k.param.empty() ? json(nullptr) : json(k.param));
    EXPECT_EQ(Header(r, "x-ratelimit-remaining-requests"), "5");  // a 400 costs nothing
  }
  HttpResponse r =
      Post("/v1/messages", R"({"model":"m","messages":[{"role":"user","content":"x"}]})");
  EXPECT_EQ(r.status, 400);
  EXPECT_EQ(json::parse(r.body)["error"]["message"], "max_tokens: Field required");
  // Anthropic: only user and assistant roles, content always required.
  const std::vector<std::pair<std::string, std::string>> anthropic = {
      {R"({"model":"m","max_tokens":5,"messages":[{"role":"system","content":"x"}]})",
       "messages.0.role: Input should be 'user' or 'assistant', got \"system\""},
      {R"({"model":"m","max_tokens":5,"messages":[{"role":"assistant"}]})",
       "messages.0.content: Field required"},
      {R"({"model":"m","max_tokens":5,"messages":[{"role":"user","content":false}]})",
       "messages.0.content: Input should be a valid string or a list of content blocks"},
      {R"({"model":"m","max_tokens":5,"messages":[{"role":"assistant","content":null}]})",
       "messages.0.content: Input should be a valid string or a list of content blocks"},
  };
  for (const auto& [body, message] : anthropic) {
    r = Post("/v1/messages", body);
    EXPECT_EQ(r.status, 400) << body;
    EXPECT_EQ(json::parse(r.body)["error"]["message"], message) << body;
    EXPECT_EQ(json::parse(r.body)["type"], "error");
  }
  // OpenAI: an assistant message may omit content (a tool call).
  EXPECT_EQ(Post("/v1/chat/completions",
                 R"({"model":"m","messages":[{"role":"user","content":"x"},{"role":"assistant"}]})")
                .status,
            200);
  EXPECT_EQ(
      Post("/v1/chat/completions", R"({"model":"m","messages":[{"role":"user","content":"x"},)"
                                   R"({"role":"assistant","content":null}]})")
          .status,
      200);
  // Null options and unknown option keys pass (OpenAI adds keys over time).
  EXPECT_EQ(Post("/v1/chat/completions", R"({"model":"m","messages":[{"role":"user","content":"x"}],)"
                                         R"("stream_options":null})")
                .status,
            200);
  EXPECT_EQ(Post("/v1/chat/completions", R"({"model":"m","messages":[{"role":"user","content":"x"}],)"
                                         R"("stream_options":{"include_usage":null,"z":1}})")
                .status,
            200);
  r = Call("GET", "/v1/chat/completions");
  EXPECT_EQ(r.status, 405);
  EXPECT_EQ(Header(r, "allow"), "POST");
  r = Call("GET", "/v2/nothing");
  EXPECT_EQ(r.status, 404);
  EXPECT_EQ(json::parse(r.body)["error"]["message"], "Invalid URL (GET /v2/nothing)");
  EXPECT_EQ(service_->TransportError(413, "/v1/messages").status, 413);
}

}  // namespace
}  // namespace bp::mockapi
