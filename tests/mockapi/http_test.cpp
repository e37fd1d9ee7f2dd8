// mockapi over real HTTP on loopback: the Beast server in-process on an
// ephemeral port with a FakeClock (exact retry values), and the built binary
// for signal handling.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <thread>

#include "bp/mockapi/server.h"
#include "bp/mockapi/service.h"
#include "bp/token_estimate.h"
#include "http_client.h"
#include "support/valkey_server.h"

namespace bp::mockapi {
namespace {

using nlohmann::json;
using test::HttpClient;
using test::HttpReply;
constexpr int64_t kS = 1'000'000;

std::string Chat(int64_t prompt_tokens) {
  return R"({"model":"gpt-4o-mini","messages":[{"role":"user","content":")" +
         TextOfTokens(prompt_tokens) + "\"}]}";
}

class HttpTest : public ::testing::Test {
 protected:
  void Start(const json& patch) {
    MockConfig base;
    base.port = 0;
    base.latency = {0, 0, 0};
    auto config = ConfigFromJson(patch, base);
    ASSERT_TRUE(config.ok()) << config.status().ToString();
    auto service = Service::Create(*config, clock_);
    ASSERT_TRUE(service.ok());
    service_ = std::move(*service);
    server_ = std::make_unique<Server>(*service_, ServerOptions{"127.0.0.1", 0, 2, false});
    ASSERT_TRUE(server_->Start().ok());
  }
  void TearDown() override {
    if (server_) server_->Stop();
  }
  int port() const { return server_->port(); }

  FakeClock clock_{1000 * kS + 250'000};  // 19.75 s before a minute edge
  std::unique_ptr<Service> service_;
  std::unique_ptr<Server> server_;
};

TEST_F(HttpTest, OpenAI429ExactlyAfterTheCap) {
  Start(json::parse(
      R"({"limits":[{"dimension":"requests","algorithm":"fixed_window","limit":5,"window_s":60}]})"));
  HttpClient client(port());
  ASSERT_TRUE(client.connected());
  for (int i = 0; i < 5; ++i) {
    HttpReply r = client.Send("POST", "/v1/chat/completions", Chat(10));
    ASSERT_EQ(r.status, 200) << r.error;
    EXPECT_EQ(r.Header("x-ratelimit-remaining-requests"), std::to_string(4 - i));  // 5 -> 0
    EXPECT_TRUE(r.keep_alive);
    EXPECT_EQ(json::parse(r.body)["object"], "chat.completion");
  }
  HttpReply r = client.Send("POST", "/v1/chat/completions", Chat(10));
  EXPECT_EQ(r.status, 429);
  EXPECT_EQ(r.Header("retry-after-ms"), "19750");
  EXPECT_EQ(r.Header("retry-after"), "20");
  EXPECT_EQ(r.Header("x-ratelimit-reset-requests"), "19.75s");
  EXPECT_EQ(r.Header("x-mockapi-bound"), "requests");
  EXPECT_EQ(json::parse(r.body)["error"]["type"], "requests");
}

TEST_F(HttpTest, AnthropicPerApiKey) {
  Start(json::parse(
      R"({"scope":"api_key","limits":[{"dimension":"requests","algorithm":"token_bucket","limit":1,"window_s":2}]})"));
  HttpClient client(port());
  const std::string body =
      R"({"model":"claude","max_tokens":5,"messages":[{"role":"user","content":"hi"}]})";
  EXPECT_EQ(client.Send("POST", "/v1/messages", body, {{"x-api-key", "k1"}}).status, 200);
  HttpReply r = client.Send("POST", "/v1/messages", body, {{"x-api-key", "k1"}});
  EXPECT_EQ(r.status, 429);
  EXPECT_EQ(r.Header("retry-after-ms"), "2000");
  EXPECT_EQ(r.Header("anthropic-ratelimit-requests-remaining"), "0");
  EXPECT_EQ(json::parse(r.body)["error"]["type"], "rate_limit_error");
  EXPECT_EQ(client.Send("POST", "/v1/messages", body, {{"x-api-key", "k2"}}).status, 200);
}

// 64 connections at once never get more admitted per window than the limit,
// counted from the responses.
TEST_F(HttpTest, ConcurrentConnectionsNeverOverAdmit) {
  Start(json::parse(R"({"limits":[
      {"dimension":"requests","algorithm":"fixed_window","limit":60,"window_s":1},
      {"dimension":"tokens","algorithm":"fixed_window","limit":3000,"window_s":1}]})"));
  auto burst = [&](int64_t prompt_tokens, int* admitted, int* limited) {
    std::atomic<int> ok{0}, too_many{0}, other{0};
    std::vector<std::thread> threads;
    for (int t = 0; t < 64; ++t) {
      threads.emplace_back([&] {
        HttpClient client(port());
        for (int i = 0; i < 5; ++i) {
          const int status =
              client.Send("POST", "/v1/chat/completions", Chat(prompt_tokens)).status;
          (status == 200 ? ok : status == 429 ? too_many : other)++;
        }
      });
    }
    for (auto& t : threads) t.join();
    EXPECT_EQ(other.load(), 0);
    *admitted = ok.load();
    *limited = too_many.load();
  };
  int admitted = 0, limited = 0;
  burst(100, &admitted, &limited);  // 120 tokens a call: tokens bind at 25 calls
  EXPECT_EQ(admitted, 25);
  EXPECT_EQ(limited, 295);
  clock_.AdvanceUs(1 * kS);
  burst(10, &admitted, &limited);  // 30 tokens a call: requests bind at 60 calls
  EXPECT_EQ(admitted, 60);
  EXPECT_EQ(limited, 260);
  const json stats = json::parse(HttpClient(port()).Send("GET", "/stats").body);
  EXPECT_EQ(stats["rate_limited"]["tokens"], 295);
  EXPECT_EQ(stats["rate_limited"]["requests"], 260);
  EXPECT_EQ(stats["admitted"], 85);
}

TEST_F(HttpTest, MalformedInput) {
  Start(json::parse(R"({"body_limit_bytes":1024})"));
  {
    HttpClient client(port());
    HttpReply r = client.Send("POST", "/v1/chat/completions", "{not json");
    EXPECT_EQ(r.status, 400);
    EXPECT_EQ(json::parse(r.body)["error"]["type"], "invalid_request_error");
    EXPECT_EQ(client.Send("DELETE", "/v1/models").status, 405);  // the connection stays usable
    EXPECT_EQ(client.Send("GET", "/nowhere").status, 404);
  }
  {
    HttpClient client(port());
    HttpReply r = client.Send("POST", "/v1/chat/completions", Chat(1000));  // 4 KiB > 1 KiB
    EXPECT_EQ(r.status, 413);
    EXPECT_EQ(json::parse(r.body)["error"]["message"],
              "Request body too large: the limit is 1024 bytes.");
    EXPECT_FALSE(r.keep_alive);
  }
  {
    HttpClient client(port());
    HttpReply r = client.Send("POST", "/v1/messages", std::string(2 << 20, 'x'));  // 2 MiB
    EXPECT_EQ(r.status, 413) << r.error;
    EXPECT_EQ(json::parse(r.body)["error"]["type"], "request_too_large");
  }
  {
    HttpClient client(port());
    HttpReply r = client.SendRaw("THIS IS NOT HTTP\r\n\r\n");
    EXPECT_EQ(r.status, 400) << r.error;
    EXPECT_TRUE(client.ServerClosed());
  }
}

TEST_F(HttpTest, PipelinedRequestsAreAnsweredInOrder) {
  Start(json::object());
  HttpClient client(port());
  const std::string body = Chat(2);
  HttpReply first = client.SendRaw(
      "GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n"
      "POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\nContent-Length: " +
      std::to_string(body.size()) + "\r\n\r\n" + body +
      "GET /v1/models HTTP/1.1\r\nHost: x\r\n\r\n");
  EXPECT_EQ(first.body, "ok\n");
  HttpReply second = client.ReadReply();
  EXPECT_EQ(json::parse(second.body)["usage"]["prompt_tokens"], 2);
  HttpReply third = client.ReadReply();
  EXPECT_EQ(json::parse(third.body)["object"], "list");
}

TEST_F(HttpTest, PacedStreamArrivesChunked) {
  Start(json::parse(R"({"latency":{"min_ms":0,"max_ms":0,"per_output_token_ms":0.5}})"));
  HttpClient client(port());
  HttpReply r =
      client.Send("POST", "/v1/chat/completions",
                  R"({"model":"m","messages":[{"role":"user","content":"hi"}],"stream":true})");
  ASSERT_EQ(r.status, 200) << r.error;
  EXPECT_EQ(r.Header("transfer-encoding"), "chunked");
  EXPECT_EQ(r.Header("content-type"), "text/event-stream");
  size_t events = 0;
  for (size_t at = 0; (at = r.body.find("data: ", at)) != std::string::npos; at += 6) ++events;
  EXPECT_EQ(events, 23u);  // role + 20 content + finish + [DONE]
  EXPECT_EQ(r.body.substr(r.body.size() - 14), "data: [DONE]\n\n");
  EXPECT_EQ(client.Send("GET", "/healthz").status, 200);  // keep-alive after a stream
}

TEST_F(HttpTest, IdleAndSlowConnectionsAreClosed) {
  Start(json::parse(R"({"idle_timeout_ms":100,"read_timeout_ms":100})"));
  HttpClient idle(port());
  EXPECT_EQ(idle.Send("GET", "/healthz").status, 200);
  EXPECT_TRUE(idle.ServerClosed());  // blocks until the server closes it
  HttpClient slow(port());
  HttpReply r =
      slow.SendRaw("POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\nContent-Length: 100\r\n\r\n{");
  EXPECT_EQ(r.status, 0);  // closed without an answer
  EXPECT_TRUE(slow.ServerClosed());
}

TEST_F(HttpTest, AdminPutTakesEffectOnTheNextCall) {
  Start(json::object());
  HttpClient client(port());
  EXPECT_EQ(client.Send("POST", "/v1/chat/completions", Chat(1)).status, 200);
  HttpReply r = client.Send(
      "PUT", "/admin/config",
      R"({"limits":[{"dimension":"requests","algorithm":"fixed_window","limit":1,"window_s":60}]})");
  ASSERT_EQ(r.status, 200) << r.body;
  EXPECT_EQ(client.Send("POST", "/v1/chat/completions", Chat(1)).status, 200);
  EXPECT_EQ(client.Send("POST", "/v1/chat/completions", Chat(1)).status, 429);
  const std::string before = client.Send("GET", "/admin/config").body;
  r = client.Send("PUT", "/admin/config", R"({"limits":[{"dimension":"requests","limit":-1}]})");
  EXPECT_EQ(r.status, 400);
  EXPECT_EQ(json::parse(r.body)["error"]["message"],
            "limits[0].limit: must be an integer in [1, 1125899906842624], got -1");
  EXPECT_EQ(client.Send("GET", "/admin/config").body, before);
  EXPECT_EQ(client.Send("POST", "/v1/chat/completions", Chat(1)).status, 429);
}

// The binary stops cleanly (exit 0) on SIGTERM and on SIGINT.
TEST(MockApiBinary, StopsCleanlyOnSignals) {
  const std::string binary = std::string(BP_BINARY_DIR) + "/apps/mockapi";
  ASSERT_EQ(access(binary.c_str(), X_OK), 0)
      << binary << " is not built: build the mockapi target (test_mockapi depends on it)";
  for (int sig : {SIGTERM, SIGINT}) {
    const int port = test::FreeLoopbackPort();
    const std::string port_arg = std::to_string(port);
    const pid_t pid = fork();
    if (pid == 0) {
      execl(binary.c_str(), binary.c_str(), "--port", port_arg.c_str(), "--zero-latency",
            static_cast<char*>(nullptr));
      _exit(127);
    }
    ASSERT_TRUE(test::WaitForPort(port, 10000));
    EXPECT_EQ(HttpClient(port).Send("GET", "/healthz").status, 200);
    kill(pid, sig);
    int status = 0;
    ASSERT_EQ(waitpid(pid, &status, 0), pid);
    EXPECT_TRUE(WIFEXITED(status)) << "signal " << sig;
    EXPECT_EQ(WEXITSTATUS(status), 0) << "signal " << sig;
  }
}

}  // namespace
}  // namespace bp::mockapi
