// ScriptedUpstream (engine_scripted_upstream.h): Beast sessions in do_x/on_x
// shape on one io thread.
#include "engine_scripted_upstream.h"

#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>

namespace bp::test {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
using tcp = asio::ip::tcp;

ScriptedAnswer ScriptedAnswer::Throttle(double retry_after_ms, const std::string& bound) {
  ScriptedAnswer a;
  a.status = 429;
  if (retry_after_ms >= 0) a.headers.push_back({"retry-after-ms", std::to_string(retry_after_ms)});
  a.body = R"({"error":{"message":"Rate limit reached","type":")" + bound +
           R"(","param":null,"code":"rate_limit_exceeded"}})";
  return a;
}

// Sessions and the pending accept point at Impl without owning it: Impl owns
// the io_context, so a handler holding a shared_ptr to Impl would be a cycle
// that outlives the server (LeakSanitizer reports it). Impl outlives every
// handler: the io_context is its first member, and its destructor destroys
// the pending handlers and the sessions they hold.
struct ScriptedUpstream::Impl {
  asio::io_context io;
  tcp::acceptor acceptor{io};
  mutable std::mutex mu;
  std::deque<ScriptedAnswer> script;
  ScriptedAnswer fallback;
  std::vector<double> arrivals;
  std::chrono::steady_clock::time_point start = std::chrono::steady_clock::now();

  ScriptedAnswer Next() {
    std::lock_guard<std::mutex> lock(mu);
    arrivals.push_back(
        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start)
            .count());
    if (script.empty()) return fallback;
    ScriptedAnswer a = script.front();
    script.pop_front();
    return a;
  }

  struct Session : std::enable_shared_from_this<Session> {
    Session(tcp::socket s, Impl* o) : stream(std::move(s)), owner(o), timer(stream.get_executor()) {}
    beast::tcp_stream stream;
    Impl* owner;
    asio::steady_timer timer;
    beast::flat_buffer buffer;
    http::request<http::string_body> req;
    http::response<http::string_body> res;

    void DoRead() {
      req = {};
      stream.expires_after(std::chrono::seconds(30));
      http::async_read(stream, buffer, req,
                       [self = shared_from_this()](beast::error_code ec, size_t) {
                         if (ec) return;
                         self->OnRead();
                       });
    }
    void OnRead() {
      ScriptedAnswer a = owner->Next();
      res = {};
      res.version(11);
      res.result(static_cast<unsigned>(a.status));
      res.set(http::field::content_type, "application/json");
      for (auto& [k, v] : a.headers) res.set(k, v);
      res.body() =
          !a.body.empty() ? a.body
          : a.status == 200
              ? R"({"id":"x","object":"chat.completion","choices":[],"usage":{"prompt_tokens":10,"completion_tokens":20,"total_tokens":30}})"
              : R"({"error":{"message":"scripted","type":"requests"}})";
      res.keep_alive(req.keep_alive());
      res.prepare_payload();
      timer.expires_after(std::chrono::milliseconds(a.delay_ms));
      timer.async_wait([self = shared_from_this()](beast::error_code) { self->DoWrite(); });
    }
    void DoWrite() {
      http::async_write(stream, res, [self = shared_from_this()](beast::error_code ec, size_t) {
        if (ec || !self->res.keep_alive()) return;
        self->DoRead();
      });
    }
  };

  void DoAccept() {
    acceptor.async_accept([this](beast::error_code ec, tcp::socket s) {
      if (ec) return;
      std::make_shared<Session>(std::move(s), this)->DoRead();
      DoAccept();
    });
  }
};

ScriptedUpstream::ScriptedUpstream(std::vector<ScriptedAnswer> script, ScriptedAnswer fallback)
    : impl_(std::make_shared<Impl>()) {
  impl_->script.assign(script.begin(), script.end());
  impl_->fallback = std::move(fallback);
  tcp::endpoint ep(asio::ip::make_address("127.0.0.1"), 0);
  impl_->acceptor.open(ep.protocol());
  impl_->acceptor.set_option(asio::socket_base::reuse_address(true));
  impl_->acceptor.bind(ep);
  impl_->acceptor.listen();
  port_ = impl_->acceptor.local_endpoint().port();
  impl_->DoAccept();
  thread_ = std::thread([impl = impl_] { impl->io.run(); });
}

ScriptedUpstream::~ScriptedUpstream() {
  impl_->io.stop();
  if (thread_.joinable()) thread_.join();
}

std::vector<double> ScriptedUpstream::arrivals_ms() const {
  std::lock_guard<std::mutex> lock(impl_->mu);
  return impl_->arrivals;
}

int64_t ScriptedUpstream::requests() const {
  std::lock_guard<std::mutex> lock(impl_->mu);
  return static_cast<int64_t>(impl_->arrivals.size());
}

}  // namespace bp::test
