// Keep-alive HTTP client on Boost.Beast (http_client.h). The only
// Beast-including TU of bp::loadgen. Sessions follow Beast's do_x/on_x shape;
// every operation sets expires_after first.
#include "bp/loadgen/http_client.h"

#include <boost/asio/ip/tcp.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <chrono>
#include <deque>
#include <string>
#include <tuple>
#include <unordered_set>
#include <vector>

#include "bp/decimal.h"
#include "bp/loadgen/retry_policy.h"

namespace bp::loadgen {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
using tcp = asio::ip::tcp;

namespace {

tcp::endpoint ToTcp(const HttpEndpoint& ep) {
  std::string host = ep.host == "localhost" ? "127.0.0.1" : ep.host;
  boost::system::error_code ec;
  auto addr = asio::ip::make_address(host, ec);
  if (ec) addr = asio::ip::make_address("127.0.0.1");
  return tcp::endpoint(addr, static_cast<uint16_t>(ep.port));
}

struct Connection {
  explicit Connection(asio::io_context& io) : stream(io) {}
  beast::tcp_stream stream;
  beast::flat_buffer buffer;
  bool connected = false;
};

}  // namespace

struct HttpClient::Impl : std::enable_shared_from_this<HttpClient::Impl> {
  struct Call {
    std::string method;
    std::string target;
    std::shared_ptr<const std::string> body;
    Callback done;
    bool retried = false;
    bool from_idle = false;  // the connection was reused from the pool
    std::shared_ptr<Connection> conn;
    std::shared_ptr<http::request<http::string_body>> req;
    std::shared_ptr<http::response<http::string_body>> res;
    RequestStream stream_options;
    // A streamed read: the parser (its on_chunk_body feeds `reader`).
    std::unique_ptr<http::response_parser<http::string_body>> parser;
    std::unique_ptr<StreamReader> reader;
    // The parser keeps a reference to its chunk callback: it lives here.
    std::function<size_t(uint64_t, beast::string_view, beast::error_code&)> on_chunk;
    bool cancelled = false;
    // The wall clock as the request is written (Unix ms): what Anthropic's
    // reset instants are read against (HttpClientOptions::unix_now_ms).
    double sent_unix_ms = 0;
  };

  Impl(asio::io_context& io_in, HttpClientOptions o)
      : io(io_in), options(std::move(o)), endpoint(ToTcp(options.endpoint)) {}

  asio::io_context& io;
  HttpClientOptions options;
  tcp::endpoint endpoint;
  std::vector<std::shared_ptr<Connection>> idle;
  std::unordered_set<std::shared_ptr<Connection>> all;
  std::deque<std::shared_ptr<Call>> waiting;
  bool stopped = false;

  std::chrono::milliseconds timeout() const {
    return std::chrono::milliseconds(options.timeout_ms);
  }

  void Start(std::shared_ptr<Call> call) {
    if (stopped) return;
    if (!idle.empty()) {
      call->conn = idle.back();
      idle.pop_back();
      call->from_idle = true;
      DoWrite(std::move(call));
      return;
    }
    if (static_cast<int>(all.size()) >= options.max_connections) {
      waiting.push_back(std::move(call));
      return;
    }
    call->conn = std::make_shared<Connection>(io);
    all.insert(call->conn);
    call->conn->stream.expires_after(timeout());
    call->conn->stream.async_connect(
        endpoint, [self = shared_from_this(), call](beast::error_code ec) {
          if (ec) return self->Fail(call, "connect: " + ec.message(), /*may_retry=*/false);
          call->conn->connected = true;
          self->DoWrite(call);
        });
  }

  void DoWrite(std::shared_ptr<Call> call) {
    auto req = std::make_shared<http::request<http::string_body>>();
    req->method(http::string_to_verb(call->method));
    req->target(call->target);
    req->version(11);
    req->set(http::field::host,
             options.endpoint.host + ":" + std::to_string(options.endpoint.port));
    req->set(http::field::user_agent, "bp-loadgen");
    req->set(http::field::content_type, "application/json");
    req->keep_alive(true);
    if (call->body) req->body() = *call->body;
    req->prepare_payload();
    call->req = req;
    call->sent_unix_ms = UnixNowMs();
    call->conn->stream.expires_after(timeout());
    http::async_write(call->conn->stream, *req,
                      [self = shared_from_this(), call](beast::error_code ec, size_t) {
                        if (ec) return self->Fail(call, "write: " + ec.message(), true);
                        self->DoRead(call);
                      });
  }

  double UnixNowMs() const {
    if (options.unix_now_ms) return options.unix_now_ms();
    return static_cast<double>(std::chrono::duration_cast<std::chrono::microseconds>(
                                   std::chrono::system_clock::now().time_since_epoch())
                                   .count()) /
           1000;
  }

  int64_t Now() const {
    if (options.now_us) return options.now_us();
    return std::chrono::duration_cast<std::chrono::microseconds>(
               std::chrono::steady_clock::now().time_since_epoch())
        .count();
  }

  void DoRead(std::shared_ptr<Call> call) {
    call->res = std::make_shared<http::response<http::string_body>>();
    if (call->stream_options.stream) return DoReadStream(std::move(call));
    call->conn->stream.expires_after(timeout());
    http::async_read(call->conn->stream, call->conn->buffer, *call->res,
                     [self = shared_from_this(), call](beast::error_code ec, size_t) {
                       if (ec) return self->Fail(call, "read: " + ec.message(), true);
                       self->OnResponse(call);
                     });
  }

  // A streamed answer: the header and then the body in pieces as they
  // arrive. A chunked body goes to the StreamReader chunk by chunk; a body
  // with a Content-Length (an error, or a stream sent at once) is read whole.
  void DoReadStream(std::shared_ptr<Call> call) {
    call->parser = std::make_unique<http::response_parser<http::string_body>>();
    call->reader = std::make_unique<StreamReader>();
    Call* raw = call.get();  // the parser lives in the call: no owning capture
    call->on_chunk = [this, raw](uint64_t, beast::string_view body,
                                 beast::error_code& ec) -> size_t {
      if (FeedUntilCut(*raw, std::string_view(body.data(), body.size()), Now())) {
        raw->cancelled = true;
        ec = asio::error::operation_aborted;  // stops the read; DoReadSome disconnects
      }
      return body.size();
    };
    call->parser->on_chunk_body(call->on_chunk);
    DoReadSome(std::move(call));
  }

  void DoReadSome(std::shared_ptr<Call> call) {
    call->conn->stream.expires_after(timeout());
    http::async_read_some(
        call->conn->stream, call->conn->buffer, *call->parser,
        [self = shared_from_this(), call](beast::error_code ec, size_t) {
          if (call->cancelled) return self->OnCancelled(call);
          if (ec) return self->Fail(call, "read: " + ec.message(), !call->parser->got_some());
          if (!call->parser->is_done()) return self->DoReadSome(call);
          *call->res = call->parser->release();
          self->OnResponse(call);
        });
  }

  // Feeds event-stream bytes (a chunk, or a whole body) line by line,
  // stopping at the cut; true when it stopped there. An event counts at its
  // blank line, so however many events one chunk holds (a server may write
  // several at once), none past the N-th token event is read.
  bool FeedUntilCut(Call& call, std::string_view bytes, int64_t now) {
    const int64_t cut = call.stream_options.cancel_after_events;
    if (cut <= 0) {
      call.reader->Feed(bytes, now);
      return false;
    }
    for (size_t at = 0; at < bytes.size();) {
      const size_t newline = bytes.find('\n', at);
      const size_t end = newline == std::string_view::npos ? bytes.size() : newline + 1;
      if (call.reader->Feed(bytes.substr(at, end - at), now).token_events >= cut) return true;
      at = end;
    }
    return false;
  }

  // The caller cut the stream short: disconnect and answer with what came.
  void OnCancelled(std::shared_ptr<Call> call) {
    HttpResponse out;
    out.status = static_cast<int>(call->parser->get().result_int());
    out.streamed = true;
    out.cancelled = true;
    out.stream = call->reader->stats();
    Close(call->conn);
    call->conn.reset();
    Callback done = std::move(call->done);
    StartWaiting();
    if (!stopped) done(std::move(out));
  }

  void OnResponse(std::shared_ptr<Call> call) {
    HttpResponse out;
    const auto& res = *call->res;
    out.status = static_cast<int>(res.result_int());
    if (auto it = res.find("retry-after-ms"); it != res.end()) {
      out.retry_after_ms = ParseSeconds(std::string_view(it->value().data(), it->value().size()));
    }
    if (auto it = res.find(http::field::retry_after); it != res.end()) {
      out.retry_after_s = ParseSeconds(std::string_view(it->value().data(), it->value().size()));
    }
    auto header = [&res](const char* name) -> std::optional<std::string_view> {
      auto it = res.find(name);
      if (it == res.end()) return std::nullopt;
      return std::string_view(it->value().data(), it->value().size());
    };
    // The remaining budget was counted as the request arrived: its reset
    // instant is read against the send, not this answer's arrival.
    out.ratelimit = ParseRateLimitHeaders(header, call->sent_unix_ms);
    if (auto it = res.find("x-should-retry"); it != res.end()) {
      std::string_view v(it->value().data(), it->value().size());
      if (v == "true") out.should_retry = true;
      if (v == "false") out.should_retry = false;
    }
    out.body = std::move(call->res->body());
    if (call->reader && out.status == 200) {
      const auto type = res[http::field::content_type];
      if (type.starts_with("text/event-stream")) {
        out.streamed = true;
        // Sent with a Content-Length (not chunked): its events arrive at
        // once; a cut still stops reading at the N-th token event.
        out.cancelled = FeedUntilCut(*call, out.body, Now());
        out.stream = call->reader->stats();
        out.body.clear();
      }
    }
    bool keep = res.keep_alive() && !out.cancelled;
    auto conn = std::move(call->conn);
    Callback done = std::move(call->done);
    if (keep && !stopped) {
      Recycle(std::move(conn));
    } else {
      Close(conn);
    }
    if (!stopped) done(std::move(out));
  }

  void Fail(std::shared_ptr<Call> call, std::string what, bool may_retry) {
    bool reused = call->from_idle && !call->retried;
    Close(call->conn);
    call->conn.reset();
    if (stopped) return;
    if (may_retry && reused) {
      // The server may have closed an idle keep-alive connection: once more, fresh.
      call->retried = true;
      call->from_idle = false;
      auto fresh = std::make_shared<Connection>(io);
      call->conn = fresh;
      all.insert(fresh);
      fresh->stream.expires_after(timeout());
      fresh->stream.async_connect(endpoint,
                                  [self = shared_from_this(), call](beast::error_code ec) {
                                    if (ec)
                                      return self->Fail(call, "connect: " + ec.message(), false);
                                    call->conn->connected = true;
                                    self->DoWrite(call);
                                  });
      return;
    }
    HttpResponse out;
    out.error = std::move(what);
    Callback done = std::move(call->done);
    StartWaiting();
    done(std::move(out));
  }

  void Recycle(std::shared_ptr<Connection> conn) {
    if (!waiting.empty()) {
      auto next = waiting.front();
      waiting.pop_front();
      next->conn = std::move(conn);
      next->from_idle = true;
      DoWrite(std::move(next));
      return;
    }
    idle.push_back(std::move(conn));
  }

  void Close(const std::shared_ptr<Connection>& conn) {
    if (!conn) return;
    beast::error_code ec;
    conn->stream.socket().shutdown(tcp::socket::shutdown_both, ec);
    conn->stream.close();
    all.erase(conn);
    std::erase(idle, conn);
  }

  void StartWaiting() {
    while (!waiting.empty() && static_cast<int>(all.size()) < options.max_connections) {
      auto next = waiting.front();
      waiting.pop_front();
      Start(std::move(next));
    }
  }
};

HttpClient::HttpClient(asio::io_context& io, HttpClientOptions options)
    : impl_(std::make_shared<Impl>(io, std::move(options))) {}

HttpClient::~HttpClient() { Shutdown(); }

void HttpClient::Request(std::string method, std::string target,
                         std::shared_ptr<const std::string> body, Callback done,
                         RequestStream stream) {
  auto call = std::make_shared<Impl::Call>();
  call->stream_options = stream;
  call->method = std::move(method);
  call->target = std::move(target);
  call->body = std::move(body);
  call->done = std::move(done);
  impl_->Start(std::move(call));
}

void HttpClient::Shutdown() {
  if (impl_->stopped) return;
  impl_->stopped = true;
  impl_->waiting.clear();
  std::vector<std::shared_ptr<Connection>> conns(impl_->all.begin(), impl_->all.end());
  for (auto& c : conns) impl_->Close(c);
}

HttpResponse HttpRequestBlocking(const HttpEndpoint& endpoint, const std::string& method,
                                 const std::string& target, const std::string& body,
                                 int timeout_ms) {
  asio::io_context io;
  HttpClientOptions options;
  options.endpoint = endpoint;
  options.timeout_ms = timeout_ms;
  HttpResponse result;
  result.error = "no answer";
  {
    HttpClient client(io, options);
    client.Request(method, target, std::make_shared<const std::string>(body),
                   [&](HttpResponse r) { result = std::move(r); });
    io.run_for(std::chrono::milliseconds(timeout_ms + 1000));
    client.Shutdown();
  }
  return result;
}

}  // namespace bp::loadgen
