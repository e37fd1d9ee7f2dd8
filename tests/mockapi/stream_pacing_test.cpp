// Paced streams over real loopback HTTP (the Beast server in-process on an
// ephemeral port): every event arrives once and in order, usage last before
// [DONE]; events due within one tick share one write (one HTTP chunk); the
// stream's total duration is not shortened by the tick; a client that
// disconnects gets back exactly the output the server had not written, for
// OpenAI and Anthropic streams, and nothing under stream_disconnect "full".
#include <gtest/gtest.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/read.hpp>
#include <boost/asio/write.hpp>
#include <chrono>
#include <functional>
#include <string>
#include <vector>

#include "bp/clock.h"
#include "bp/mockapi/server.h"
#include "bp/mockapi/service.h"

namespace bp::mockapi {
namespace {

using nlohmann::json;
namespace net = boost::asio;
using tcp = net::ip::tcp;
using SteadyClock = std::chrono::steady_clock;

// A raw HTTP/1.1 client that reads a chunked answer one HTTP chunk at a time
// (the server writes one chunk per write), so a test sees the coalescing.
class ChunkReader {
 public:
  explicit ChunkReader(int port) : socket_(io_) {
    socket_.connect(
        tcp::endpoint(net::ip::make_address("127.0.0.1"), static_cast<unsigned short>(port)));
    timeval tv{10, 0};  // a broken server fails the test instead of hanging it
    setsockopt(socket_.native_handle(), SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
  }
  // Sends a POST and reads the status line and headers.
  std::string Post(const std::string& target, const std::string& body) {
    const std::string req = "POST " + target + " HTTP/1.1\r\nHost: x\r\nContent-Type: " +
                            "application/json\r\nContent-Length: " + std::to_string(body.size()) +
                            "\r\n\r\n" + body;
    net::write(socket_, net::buffer(req));
    return ReadUntil("\r\n\r\n");
  }
  // The next chunk's data; empty for the last chunk (or on error).
  std::string NextChunk() {
    const std::string line = ReadUntil("\r\n");
    if (line.empty()) return "";
    const size_t size = std::stoul(line, nullptr, 16);
    if (size == 0) return "";
    const std::string data = ReadExactly(size + 2);
    return data.substr(0, size);
  }
  void Close() { socket_.close(); }

 private:
  std::string ReadUntil(const std::string& end) {
    boost::system::error_code ec;
    size_t at;
    while ((at = buf_.find(end)) == std::string::npos && Fill(ec)) {
    }
    if (at == std::string::npos) return "";
    std::string out = buf_.substr(0, at + end.size());
    buf_.erase(0, at + end.size());
    return out;
  }
  std::string ReadExactly(size_t n) {
    boost::system::error_code ec;
    while (buf_.size() < n && Fill(ec)) {
    }
    std::string out = buf_.substr(0, n);
    buf_.erase(0, std::min(n, buf_.size()));
    return out;
  }
  bool Fill(boost::system::error_code& ec) {
    char tmp[4096];
    const size_t n = socket_.read_some(net::buffer(tmp), ec);
    buf_.append(tmp, n);
    return !ec;
  }
  net::io_context io_;
  tcp::socket socket_;
  std::string buf_;
};

// The server-sent events of `data`, each with its blank line.
std::vector<std::string> Events(const std::string& data) {
  std::vector<std::string> out;
  for (size_t at = 0, end; (end = data.find("\n\n", at)) != std::string::npos; at = end + 2)
    out.push_back(data.substr(at, end + 2 - at));
  return out;
}

const char kOpenAIBody[] =
    R"({"model":"m","messages":[{"role":"user","content":"tok tok tok tok "}],)"
    R"("max_tokens":50,"stream":true,"stream_options":{"include_usage":true}})";
const char kAnthropicBody[] =
    R"({"model":"m","max_tokens":50,"messages":[{"role":"user","content":"tok tok tok tok "}],)"
    R"("stream":true})";

class StreamPacing : public ::testing::Test {
 protected:
  void Start(const std::string& patch) {
    server_.reset();
    MockConfig base;
    base.port = 0;
    auto config = ConfigFromJson(json::parse(patch), base);
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
  json Stats() { return json::parse(service_->Handle({"GET", "/stats", "", "", ""}).body); }
  int64_t TokensRemaining() {
    const json stats = Stats();  // a range-for over Stats().at(...) would dangle
    for (const auto& l : stats.at("limits"))
      if (l.at("dimension") == "tokens") return l.at("remaining").get<int64_t>();
    return -1;
  }
  // Reads the stream's chunks until its last; returns them.
  std::vector<std::string> ReadAll(ChunkReader& c) {
    std::vector<std::string> chunks;
    for (std::string d; !(d = c.NextChunk()).empty();) chunks.push_back(d);
    return chunks;
  }

  FakeClock clock_{1000 * 1'000'000};
  std::unique_ptr<Service> service_;
  std::unique_ptr<Server> server_;
};

TEST_F(StreamPacing, OpenAIEventsAllArriveInOrderWithUsageLast) {
  // 20 tokens at 0.5 ms: 24 events (role, 20 contents, finish, usage, [DONE]).
  Start(R"({"completion_tokens":{"distribution":"fixed","value":20},)"
        R"("latency":{"min_ms":0,"max_ms":0,"per_output_token_ms":0.5}})");
  ChunkReader c(server_->port());
  const std::string head = c.Post("/v1/chat/completions", kOpenAIBody);
  ASSERT_NE(head.find("200 OK"), std::string::npos) << head;
  ASSERT_NE(head.find("Transfer-Encoding: chunked"), std::string::npos) << head;
  std::string data;
  for (const std::string& chunk : ReadAll(c)) data += chunk;
  const auto events = Events(data);
  ASSERT_EQ(events.size(), 24u);
  EXPECT_NE(events[0].find(R"("delta":{"role":"assistant")"), std::string::npos);
  for (int i = 1; i <= 20; ++i)
    EXPECT_NE(events[i].find(R"("delta":{"content":"tok "})"), std::string::npos) << i;
  EXPECT_NE(events[21].find(R"("finish_reason":"stop")"), std::string::npos);
  EXPECT_NE(events[22].find(R"("choices":[],"usage":{"prompt_tokens":4,"completion_tokens":20,)"
                            R"("total_tokens":24})"),
            std::string::npos)
      << events[22];
  EXPECT_EQ(events[23], "data: [DONE]\n\n");
  EXPECT_EQ(data.substr(data.size() - 14), "data: [DONE]\n\n");  // nothing after it
}

TEST_F(StreamPacing, AnthropicEventsAllArriveInOrder) {
  // 20 tokens: message_start, content_block_start, 20 deltas, content_block_stop,
  // message_delta (the usage), message_stop: 25 events.
  Start(R"({"completion_tokens":{"distribution":"fixed","value":20},)"
        R"("latency":{"min_ms":0,"max_ms":0,"per_output_token_ms":0.5}})");
  ChunkReader c(server_->port());
  ASSERT_NE(c.Post("/v1/messages", kAnthropicBody).find("200 OK"), std::string::npos);
  std::string data;
  for (const std::string& chunk : ReadAll(c)) data += chunk;
  const auto events = Events(data);
  ASSERT_EQ(events.size(), 25u);
  EXPECT_EQ(events[0].rfind("event: message_start\n", 0), 0u);
  EXPECT_EQ(events[1].rfind("event: content_block_start\n", 0), 0u);
  for (int i = 2; i < 22; ++i) EXPECT_EQ(events[i].rfind("event: content_block_delta\n", 0), 0u);
  EXPECT_EQ(events[22].rfind("event: content_block_stop\n", 0), 0u);
  EXPECT_NE(events[23].find(R"("usage":{"output_tokens":20})"), std::string::npos);
  EXPECT_EQ(events[24].rfind("event: message_stop\n", 0), 0u);
}

TEST_F(StreamPacing, EventsDueWithinOneTickShareOneWrite) {
  // 20 tokens at 0.05 ms: 24 events over 1 ms; a 500 ms tick. The first event
  // goes out alone with the headers; the pacer's first wake writes what is due
  // by then, and its next wake (a tick later, when all are due) all the rest:
  // at most 3 chunks where one timer per event would write 24.
  Start(R"({"completion_tokens":{"distribution":"fixed","value":20},"stream_tick_ms":500,)"
        R"("latency":{"min_ms":0,"max_ms":0,"per_output_token_ms":0.05}})");
  ChunkReader c(server_->port());
  ASSERT_NE(c.Post("/v1/chat/completions", kOpenAIBody).find("200 OK"), std::string::npos);
  const auto chunks = ReadAll(c);
  ASSERT_GE(chunks.size(), 2u);
  EXPECT_LE(chunks.size(), 3u);
  ASSERT_EQ(Events(chunks[0]).size(), 1u);  // the first event is written on time, alone
  EXPECT_NE(chunks[0].find(R"("role":"assistant")"), std::string::npos);
  size_t events = 0;
  for (const auto& chunk : chunks) events += Events(chunk).size();
  EXPECT_EQ(events, 24u);
  EXPECT_EQ(Events(chunks.back()).back(), "data: [DONE]\n\n");
}

TEST_F(StreamPacing, TheTickNeverShortensTheStream) {
  // 12 tokens at 4 ms: 48 ms over 16 events (12 contents, role, finish, usage,
  // [DONE]): the last is due 15 intervals of 3 ms after the first, whatever the tick.
  Start(R"({"completion_tokens":{"distribution":"fixed","value":12},"stream_tick_ms":5,)"
        R"("latency":{"min_ms":0,"max_ms":0,"per_output_token_ms":4}})");
  ChunkReader c(server_->port());
  const auto sent = SteadyClock::now();
  ASSERT_NE(c.Post("/v1/chat/completions", kOpenAIBody).find("200 OK"), std::string::npos);
  size_t events = 0;
  for (const auto& chunk : ReadAll(c)) events += Events(chunk).size();
  const auto took = SteadyClock::now() - sent;
  EXPECT_EQ(events, 16u);
  EXPECT_GE(took, std::chrono::milliseconds(45));  // 15 x 3 ms
}

// Cuts a stream after `read` events: the client closes with nothing unread,
// so the server's next write still succeeds (the kernel takes it and the
// closed peer answers with a reset) and the one after fails. The server so
// counts read + 1 events written. 10 tokens, one an event, 150 ms apart:
// far more than a tick, so each write carries one event.
struct Cut {
  int64_t cuts, refunded, remaining;
};
Cut CutAfter(ChunkReader& c, size_t read, const std::function<json()>& stats) {
  size_t seen = 0;
  while (seen < read) {
    const std::string chunk = c.NextChunk();
    if (chunk.empty()) break;
    seen += Events(chunk).size();
  }
  EXPECT_EQ(seen, read);
  c.Close();
  json j;
  for (int i = 0; i < 200; ++i) {  // the failing write comes 2 intervals later
    j = stats();
    if (j.at("stream_cuts").get<int64_t>() > 0) break;
    ::usleep(10'000);
  }
  Cut cut{j.at("stream_cuts").get<int64_t>(), j.at("stream_cut_refunded_tokens").get<int64_t>(),
          -1};
  for (const auto& l : j.at("limits"))
    if (l.at("dimension") == "tokens") cut.remaining = l.at("remaining").get<int64_t>();
  return cut;
}

const char kCutConfig[] =
    R"({"completion_tokens":{"distribution":"fixed","value":10},)"
    R"("latency":{"min_ms":0,"max_ms":0,"per_output_token_ms":%s},)"
    R"("limits":[{"dimension":"tokens","algorithm":"fixed_window","limit":1000000,)"
    R"("window_s":3600}],"stream_disconnect":"%s"})";

std::string CutConfig(const char* per_token_ms, const char* mode) {
  char buf[512];
  std::snprintf(buf, sizeof buf, kCutConfig, per_token_ms, mode);
  return buf;
}

TEST_F(StreamPacing, ACutOpenAIStreamGivesBackExactlyTheTokensNotWritten) {
  // 14 events (role, 10 contents, finish, usage, [DONE]) over 10 x 210 ms:
  // 150 ms apart. Charged 4 prompt + 10 output = 14 tokens.
  Start(CutConfig("210", "generated"));
  ChunkReader c(server_->port());
  ASSERT_NE(c.Post("/v1/chat/completions", kOpenAIBody).find("200 OK"), std::string::npos);
  // Read role + 3 contents; the server writes a 4th content, then fails:
  // 4 tokens generated, 10 - 4 = 6 given back.
  const Cut cut = CutAfter(c, 4, [this] { return Stats(); });
  EXPECT_EQ(cut.cuts, 1);
  EXPECT_EQ(cut.refunded, 6);
  EXPECT_EQ(cut.remaining, 1000000 - 14 + 6);
}

TEST_F(StreamPacing, ACutAnthropicStreamGivesBackExactlyTheTokensNotWritten) {
  // 15 events (message_start, content_block_start, 10 deltas, stop, delta, stop)
  // over 10 x 225 ms: 150 ms apart. Charged 4 input + 10 output = 14 tokens.
  Start(CutConfig("225", "generated"));
  ChunkReader c(server_->port());
  ASSERT_NE(c.Post("/v1/messages", kAnthropicBody).find("200 OK"), std::string::npos);
  // Read the 2 lead events + 3 deltas; the server writes a 4th delta, then
  // fails: 4 tokens generated, 6 given back.
  const Cut cut = CutAfter(c, 5, [this] { return Stats(); });
  EXPECT_EQ(cut.cuts, 1);
  EXPECT_EQ(cut.refunded, 6);
  EXPECT_EQ(cut.remaining, 1000000 - 14 + 6);
}

TEST_F(StreamPacing, UnderFullACutStreamKeepsItsWholeCharge) {
  for (const char* target : {"/v1/chat/completions", "/v1/messages"}) {
    SCOPED_TRACE(target);
    Start(CutConfig("30", "full"));  // 10 tokens over 300 ms
    ChunkReader c(server_->port());
    const bool messages = std::string(target) == "/v1/messages";
    ASSERT_NE(c.Post(target, messages ? kAnthropicBody : kOpenAIBody).find("200 OK"),
              std::string::npos);
    c.NextChunk();
    c.Close();
    ::usleep(400'000);  // past the stream's end: the server has met the closed socket
    const json j = Stats();
    EXPECT_EQ(j.at("stream_cuts"), 0);
    EXPECT_EQ(j.at("stream_cut_refunded_tokens"), 0);
    EXPECT_EQ(TokensRemaining(), 1000000 - 14);  // 4 prompt + 10 output, kept
    server_->Stop();
  }
}

}  // namespace
}  // namespace bp::mockapi
