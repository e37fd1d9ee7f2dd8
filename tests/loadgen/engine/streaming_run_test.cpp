// Streamed calls against the real mockapi binary over loopback: the HTTP
// client reads a paced event stream chunk by chunk (usage from the final
// chunk, [DONE], the connection kept), cuts one short after N token events
// (also when one chunk holds more), every configuration runs a streaming
// workload to the end, naive and litellm retry a streamed 429 and read the
// retry's stream, litellm's TPM slice counts a stream's usage only in the
// counted mode, and bp releases a cut stream with the tokens received, so the
// gate's per-class totals are exactly prompt + tokens received.
#include <gtest/gtest.h>

#include <unistd.h>

#include <boost/asio/io_context.hpp>
#include <nlohmann/json.hpp>

#include "bp/gate_admin.h"
#include "bp/loadgen/http_client.h"
#include "bp/loadgen/runner.h"
#include "mockapi_process.h"
#include "support/valkey_server.h"
#include "workload_builder.h"

namespace bp::loadgen {
namespace {

// mockapi's config: 12 completion tokens a call, 20 ms a token (a paced,
// chunked stream: one token an event), no base latency. The pace is slow
// enough that a stall of the loaded test box (tens of ms) cannot squeeze
// the stream's timing checks below: mockapi times every event from the
// first write, so a late wake sends what is due at once.
const char kUpstream[] =
    R"({"completion_tokens":{"distribution":"fixed","value":12},)"
    R"("latency":{"min_ms":0,"max_ms":0,"per_output_token_ms":20},)"
    R"("limits":[{"dimension":"requests","algorithm":"fixed_window","limit":1000,"window_s":1}]})";

const char kStreamBody[] =
    R"({"model":"m","messages":[{"role":"user","content":"tok tok tok tok "}],)"
    R"("max_tokens":50,"stream":true,"stream_options":{"include_usage":true}})";

class Streaming : public ::testing::Test {
 protected:
  void SetUp() override {
    binary_ = bp::test::MockapiBinary();
    ASSERT_FALSE(binary_.empty()) << bp::test::kNoMockapi;
    ASSERT_TRUE(mockapi_.running());
    endpoint_ = {"127.0.0.1", mockapi_.port()};
    const HttpResponse put = HttpRequestBlocking(endpoint_, "PUT", "/admin/config", kUpstream, 5000);
    ASSERT_EQ(put.status, 200) << put.body;
  }
  // Two requests on one client (so the second may reuse the connection).
  std::vector<HttpResponse> Twice(RequestStream first, RequestStream second) {
    boost::asio::io_context io;
    HttpClientOptions o;
    o.endpoint = endpoint_;
    HttpClient client(io, o);
    std::vector<HttpResponse> out;
    auto body = std::make_shared<const std::string>(kStreamBody);
    client.Request("POST", "/v1/chat/completions", body,
                   [&](HttpResponse r) {
                     out.push_back(std::move(r));
                     client.Request("POST", "/v1/chat/completions", body,
                                    [&](HttpResponse r2) { out.push_back(std::move(r2)); }, second);
                   },
                   first);
    io.run_for(std::chrono::seconds(10));
    return out;
  }
  std::string binary_ = bp::test::MockapiBinary();
  bp::test::MockapiProcess mockapi_{binary_, {}};
  HttpEndpoint endpoint_;
};

TEST_F(Streaming, ClientReadsAPacedStreamToDoneWithItsUsage) {
  const auto r = Twice({true, 0}, {true, 0});
  ASSERT_EQ(r.size(), 2u);
  for (const HttpResponse& a : r) {
    EXPECT_EQ(a.status, 200) << a.error;
    EXPECT_TRUE(a.streamed);
    EXPECT_FALSE(a.cancelled);
    EXPECT_TRUE(a.stream.done);
    EXPECT_EQ(a.stream.token_events, 12);  // 12 tokens, one an event
    EXPECT_EQ(a.stream.tokens_received(), 12);
    EXPECT_EQ(a.stream.prompt_tokens, 4);  // 16 bytes / 4
    EXPECT_EQ(a.stream.completion_tokens, 12);
    EXPECT_EQ(a.stream.malformed, 0);
    EXPECT_TRUE(a.body.empty());  // a chunked stream is not buffered
    // 240 ms spread over 16 events (role, 12 tokens, finish, usage, [DONE]),
    // 15 ms apart: the token events are due over 11 gaps, 165 ms; read chunk
    // by chunk, they span at least 100 ms of it (one read at the end: 0).
    EXPECT_GE(a.stream.last_token_us - a.stream.first_token_us, 100 * 1000);
  }
}

TEST_F(Streaming, ClientCutsAStreamAfterNTokenEvents) {
  const auto r = Twice({true, 3}, {true, 0});
  ASSERT_EQ(r.size(), 2u);
  EXPECT_EQ(r[0].status, 200);
  EXPECT_TRUE(r[0].cancelled);
  EXPECT_FALSE(r[0].stream.done);
  EXPECT_EQ(r[0].stream.token_events, 3);
  EXPECT_EQ(r[0].stream.tokens_received(), 3);
  EXPECT_FALSE(r[0].stream.completion_tokens.has_value());
  // The cut connection was closed; the next call opens a fresh one and reads
  // its whole stream.
  EXPECT_TRUE(r[1].stream.done);
  EXPECT_EQ(r[1].stream.completion_tokens, 12);
}

TEST_F(Streaming, ClientCutsAtTheNthTokenEventOfAChunkHoldingMore) {
  // 12 tokens 0.05 ms apart and a 500 ms stream tick: mockapi writes the role
  // event alone, then what its first wake finds due, then every other event in
  // one chunk, so the 3rd token event shares a chunk with later ones (or ends
  // one): the client stops at it either way.
  const HttpResponse put = HttpRequestBlocking(
      endpoint_, "PUT", "/admin/config",
      R"({"stream_tick_ms":500,"latency":{"min_ms":0,"max_ms":0,"per_output_token_ms":0.05}})",
      5000);
  ASSERT_EQ(put.status, 200) << put.body;
  const auto r = Twice({true, 3}, {true, 0});
  ASSERT_EQ(r.size(), 2u);
  EXPECT_TRUE(r[0].cancelled);
  EXPECT_EQ(r[0].stream.token_events, 3);
  EXPECT_EQ(r[0].stream.tokens_received(), 3);
  EXPECT_TRUE(r[1].stream.done);
  EXPECT_EQ(r[1].stream.token_events, 12);
}

TEST_F(Streaming, AnErrorAnswerToAStreamedRequestIsAPlainBody) {
  // A token bucket of one request a minute: a fixed window's edge is on the
  // wall clock's minute and could fall between the two calls.
  const HttpResponse put = HttpRequestBlocking(
      endpoint_, "PUT", "/admin/config",
      R"({"limits":[{"dimension":"requests","algorithm":"token_bucket","limit":1,"window_s":60}]})",
      5000);
  ASSERT_EQ(put.status, 200);
  const auto r = Twice({true, 0}, {true, 0});
  ASSERT_EQ(r.size(), 2u);
  EXPECT_TRUE(r[0].streamed);
  EXPECT_EQ(r[1].status, 429);
  EXPECT_FALSE(r[1].streamed);
  EXPECT_NE(r[1].body.find("rate_limit"), std::string::npos);
  EXPECT_TRUE(r[1].retry_after_ms.has_value());
}

// mockapi's stats and its one token limit's remaining count.
struct TokenUse {
  int64_t cuts = 0, refunded = 0, remaining = 0, completion = 0;
};
TokenUse ReadStats(const HttpEndpoint& ep) {
  const HttpResponse r = HttpRequestBlocking(ep, "GET", "/stats", "", 5000);
  const auto j = nlohmann::json::parse(r.body);
  TokenUse u;
  u.cuts = j.at("stream_cuts").get<int64_t>();
  u.refunded = j.at("stream_cut_refunded_tokens").get<int64_t>();
  u.completion = j.at("completion_tokens").get<int64_t>();
  for (const auto& l : j.at("limits")) {
    if (l.at("dimension") == "tokens") u.remaining = l.at("remaining").get<int64_t>();
  }
  return u;
}

TEST_F(Streaming, MockapiGivesBackTheTokensACutStreamNeverGenerated) {
  // 60 tokens of completion clamped to the request's max_tokens 50, at 10 ms
  // a token (one event a token); one
  // 1 000 000-token window of an hour, so nothing rolls during the test.
  const char* config = R"({"completion_tokens":{"distribution":"fixed","value":60},)"
                       R"("latency":{"min_ms":0,"max_ms":0,"per_output_token_ms":10},)"
                       R"("limits":[{"dimension":"tokens","algorithm":"fixed_window",)"
                       R"("limit":1000000,"window_s":3600}]})";
  for (const std::string mode : {"generated", "full"}) {
    SCOPED_TRACE(mode);
    auto doc = nlohmann::json::parse(config);
    doc["stream_disconnect"] = mode;
    ASSERT_EQ(HttpRequestBlocking(endpoint_, "PUT", "/admin/config", doc.dump(), 5000).status, 200);
    const TokenUse before = ReadStats(endpoint_);  // the counters span configurations
    const auto r = Twice({true, 3}, {true, 0});
    ASSERT_EQ(r.size(), 2u);
    ASSERT_TRUE(r[0].cancelled);
    // The server notices the disconnect at a failing write: wait for it.
    TokenUse u;
    for (int i = 0; i < 100; ++i) {
      u = ReadStats(endpoint_);
      u.cuts -= before.cuts;
      u.refunded -= before.refunded;
      u.completion -= before.completion;
      if (u.cuts == 1 || mode == "full") break;
      ::usleep(20'000);
    }
    // Two calls of 4 prompt + 50 completion tokens were charged at admission.
    EXPECT_EQ(u.completion, 100);
    if (mode == "full") {
      EXPECT_EQ(u.cuts, 0);
      EXPECT_EQ(u.remaining, 1000000 - 2 * 54);  // the cut stream costs its whole answer
      continue;
    }
    EXPECT_EQ(u.cuts, 1);
    // What it gave back is what was never generated: at least the client's 3
    // token events were, and the server noticed within a few more events.
    EXPECT_GT(u.refunded, 0);
    EXPECT_LE(u.refunded, 50 - 3);
    EXPECT_EQ(u.remaining, 1000000 - 2 * 54 + u.refunded);  // the limit carries exactly that
  }
}

// One tenant, 4 slots, 8 streamed one-activity workflows, prompt 10, 12
// completion tokens, tokens capped so bp's gate counts them.
Workload StreamingWorkload(double cancel_share) {
  nlohmann::json doc = testing::OneTenantWorkloadDoc("streaming-run");
  doc["slots"] = 4;
  nlohmann::json& t = doc["tenants"][0];
  t["concurrency"] = 4;
  t["workflows"] = 8;
  t["max_tokens"] = 50;
  t["stream"] = true;
  if (cancel_share > 0) {
    t["cancel_share"] = cancel_share;
    t["cancel_after_events"] = 3;
  }
  doc["upstream"] = nlohmann::json::parse(kUpstream);
  doc["upstream"]["limits"].push_back(
      {{"dimension", "tokens"}, {"algorithm", "fixed_window"}, {"limit", 100000}, {"window_s", 1}});
  return testing::BuildWorkload(doc);
}

class StreamingRun : public Streaming {
 protected:
  RunRecords Run(const Workload& w, const std::string& config) {
    RunOptions o;
    o.configuration = config;
    o.speedup = 1;
    o.upstream_url = mockapi_.url();
    o.valkey_url = valkey_.url();
    // A loaded test box can hold a gate call past the default 100 ms: it
    // would fail open, and bp's release totals below would miss its call.
    o.gate_command_timeout_ms = 2000;
    auto r = RunOnce(w, o);
    EXPECT_TRUE(r.ok()) << r.status().message();
    return r.ok() ? std::move(*r) : RunRecords{};
  }
  bp::test::ValkeyServer valkey_;
};

TEST_F(StreamingRun, EveryConfigurationFinishesAStreamingWorkload) {
  ASSERT_TRUE(valkey_.running()) << valkey_.error();
  const Workload w = StreamingWorkload(0);
  for (const std::string config : {"naive", "tn", "litellm", "bp"}) {
    SCOPED_TRACE(config);
    const RunRecords r = Run(w, config);
    int ok = 0;
    for (const ActivityRecord& a : r.activities) {
      ok += a.ok ? 1 : 0;
      EXPECT_EQ(a.completion_tokens, 12);  // the final chunk's usage
    }
    EXPECT_EQ(ok, 8);
    ASSERT_EQ(r.attempts.size(), 8u);
    for (const AttemptRecord& a : r.attempts) {
      EXPECT_EQ(a.stream, 1);
      EXPECT_GE(a.ttft_us, 0);
      EXPECT_GE(a.itl_us, 10 * 1000);  // 15 ms between token events, paced
    }
  }
}

// 3 requests a 1 s window against 4 concurrent streamed calls: some get a
// 429 (a plain JSON answer, before any event). naive's SDK and litellm's
// router retry it as any 429, and the retry reads its stream to the usage.
TEST_F(StreamingRun, AStreamed429IsRetriedAndTheRetryStreams) {
  ASSERT_TRUE(valkey_.running()) << valkey_.error();
  nlohmann::json doc = testing::OneTenantWorkloadDoc("streaming-429");
  doc["slots"] = 4;
  nlohmann::json& t = doc["tenants"][0];
  t["concurrency"] = 4;
  t["workflows"] = 8;
  t["max_tokens"] = 50;
  t["stream"] = true;
  doc["upstream"] = nlohmann::json::parse(kUpstream);
  doc["upstream"]["limits"][0]["limit"] = 3;
  for (const std::string config : {"naive", "litellm"}) {
    SCOPED_TRACE(config);
    const RunRecords r = Run(testing::BuildWorkload(doc), config);
    int ok = 0, throttled = 0, streamed = 0;
    for (const ActivityRecord& a : r.activities) {
      ok += a.ok ? 1 : 0;
      EXPECT_EQ(a.completion_tokens, 12);  // the final chunk's usage, also after a 429
    }
    for (const AttemptRecord& a : r.attempts) {
      if (a.status == 429 && !a.proxy_local) {
        ++throttled;
        EXPECT_LT(a.ttft_us, 0);  // no event came before the error
      }
      if (a.status == 200) {
        ++streamed;
        EXPECT_EQ(a.stream, 1);
        EXPECT_GE(a.ttft_us, 0);
      }
    }
    EXPECT_EQ(ok, 8);
    EXPECT_EQ(streamed, 8);
    EXPECT_GT(throttled, 0);  // 8 calls, 4 at once, 3 a window
  }
}

// litellm's TPM slice of tenant a: weights 1 and 1199 in one class, so a
// gets 1/1200 of 120 000 tokens a minute: 100 tokens per 60 s window
// (mockapi's own limit, the whole 120 000, never binds). Each of a's 8
// sequential streamed calls reserves its max_tokens, 50, and answers 12
// completion tokens in its final chunk.
//   counted: the usage replaces the reservation, 12 more a call; before the
//     6th call the window holds 5 x 12 = 60, and 60 + 50 > 100: a
//     proxy-local 429 with retry-after 60 s, which the SDK waits out past the
//     3 s run cap. 5 OK.
//   uncounted: each reservation is corrected to 0 (the streamed usage never
//     reaches TPM): every check sees 0 + 50 <= 100. 8 OK, no proxy-local 429.
TEST_F(StreamingRun, LitellmUncountedStreamUsageNeverReachesTheTpmSlice) {
  ASSERT_TRUE(valkey_.running()) << valkey_.error();
  nlohmann::json doc = testing::OneTenantWorkloadDoc("litellm-stream-usage");
  doc["slots"] = 2;
  doc["run_length_cap_s"] = 3;
  nlohmann::json& a = doc["tenants"][0];
  a["id"] = "a";
  a["workflows"] = 8;
  a["max_tokens"] = 50;
  a["stream"] = true;
  nlohmann::json b = doc["tenants"][0];
  b["id"] = "b";
  b["weight"] = 1199;
  b["workflows"] = 1;
  b["stream"] = false;
  doc["tenants"].push_back(b);
  doc["upstream"] = nlohmann::json::parse(kUpstream);
  doc["upstream"]["limits"].push_back(
      {{"dimension", "tokens"}, {"algorithm", "fixed_window"}, {"limit", 120000}, {"window_s", 60}});
  const Workload w = testing::BuildWorkload(doc);
  for (const bool counted : {false, true}) {
    SCOPED_TRACE(counted ? "counted" : "uncounted");
    RunOptions o;
    o.configuration = "litellm";
    o.speedup = 1;
    o.upstream_url = mockapi_.url();
    o.valkey_url = valkey_.url();
    o.litellm.count_streamed = counted;
    auto r = RunOnce(w, o);
    ASSERT_TRUE(r.ok()) << r.status().message();
    int ok_a = 0, ok_b = 0, proxy_local = 0;
    for (const ActivityRecord& act : r->activities) {
      if (act.ok) ++(act.tenant_index == 0 ? ok_a : ok_b);
    }
    for (const AttemptRecord& at : r->attempts) proxy_local += at.proxy_local ? 1 : 0;
    EXPECT_EQ(ok_a, counted ? 5 : 8);
    EXPECT_EQ(proxy_local, counted ? 1 : 0);
    EXPECT_EQ(ok_b, 1);
  }
}

TEST_F(StreamingRun, BpReleasesACutStreamWithTheTokensReceived) {
  ASSERT_TRUE(valkey_.running()) << valkey_.error();
  // Every other streamed call is cut after 3 token events: 4 cut, 4 whole.
  const RunRecords r = Run(StreamingWorkload(0.5), "bp");
  int cut = 0, whole = 0;
  for (const AttemptRecord& a : r.attempts) {
    cut += a.stream == 2 ? 1 : 0;
    whole += a.stream == 1 ? 1 : 0;
  }
  EXPECT_EQ(cut, 4);
  EXPECT_EQ(whole, 4);
  EXPECT_EQ(r.gate_unreleased, 0u);
  GateOptions at;
  at.url = valkey_.url();
  at.target = r.gate_target;
  GateAdmin admin(at);
  auto state = admin.State();
  ASSERT_TRUE(state.ok()) << state.status().message();
  ASSERT_GE(state->class_tokens.size(), 1u);
  // 4 x (10 + 12) whole + 4 x (10 + 3) cut = 88 + 52 tokens, 8 requests.
  EXPECT_EQ(state->class_tokens[0], 140);
  EXPECT_EQ(state->class_requests[0], 8);
}

}  // namespace
}  // namespace bp::loadgen
