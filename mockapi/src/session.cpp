// One HTTP connection of the mockapi server (the only mockapi TU with
// Beast). Sessions follow Beast's http_server_async shape: do_x / on_x pairs,
// all on the connection's one thread. Paced streams wait on their thread's
// StreamPacer (stream_pacer.h), not on a timer of their own.
#include "session.h"

#include <boost/asio/dispatch.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <charconv>
#include <optional>
#include <string>

#include "bp/mockapi/service.h"
#include "stream_pacer.h"

namespace bp::mockapi {
namespace {

namespace beast = boost::beast;
namespace http = beast::http;
namespace net = boost::asio;
using tcp = net::ip::tcp;

constexpr int kMaxDrainReads = 1024;  // after a 413: at most 1024 reads of 64 KiB
constexpr size_t kFirstReadBytes = 4096;

// Each io_context is run by one thread and a connection lives on one
// context, so its handlers never run concurrently: no strand, and the
// executor is the context's own (no type-erased any_io_executor per handler).
using Executor = net::io_context::executor_type;
using Socket = internal::ServerSocket;
using SteadyClock = std::chrono::steady_clock;
using Timer = net::basic_waitable_timer<SteadyClock, net::wait_traits<SteadyClock>, Executor>;

std::string_view View(beast::string_view s) { return {s.data(), s.size()}; }

using internal::PacedStream;
using internal::StreamPacer;

class Session : public PacedStream, public std::enable_shared_from_this<Session> {
 public:
  Session(Socket&& socket, Service& service, StreamPacer& pacer)
      : socket_(std::move(socket)),
        delay_(socket_.get_executor()),
        deadline_timer_(socket_.get_executor()),
        service_(service),
        pacer_(pacer) {}

  // The pacer's call: every event due by `now` in one write.
  void OnDue(SteadyClock::time_point now) override {
    if (closed_) return;
    out_.clear();
    AppendDueEvents(now);
    DoWrite();
  }

  void Run() {
    beast::error_code ec;
    socket_.non_blocking(true, ec);  // DoWrite first tries a direct send
    net::dispatch(socket_.get_executor(),
                  beast::bind_front_handler(&Session::DoRead, shared_from_this()));
  }

 private:
  // Timeouts are lazy: a phase moves deadline_ (one clock read); the timer
  // is re-armed only when the deadline moves before its expiry, and on
  // expiry re-arms to a later deadline_ instead of closing. A keep-alive
  // request/response cycle so costs no timer operation.
  void SetDeadline(int64_t ms) {
    deadline_ = SteadyClock::now() + std::chrono::milliseconds(ms);
    if (armed_ && deadline_ >= armed_at_) return;
    ArmAt(deadline_);
  }
  void ArmAt(SteadyClock::time_point at) {
    armed_ = true;
    armed_at_ = at;
    deadline_timer_.expires_at(at);  // cancels a pending wait (operation_aborted)
    deadline_timer_.async_wait(beast::bind_front_handler(&Session::OnDeadline, shared_from_this()));
  }
  void OnDeadline(beast::error_code ec) {
    if (ec == net::error::operation_aborted) return;  // re-armed, or closed
    armed_ = false;
    if (closed_ || deadline_ == SteadyClock::time_point::max()) return;
    if (SteadyClock::now() >= deadline_) return DoClose();  // pending I/O ends aborted
    ArmAt(deadline_);
  }

  void DoRead() {
    limits_ = service_.connection_limits();
    parser_.emplace();
    parser_->body_limit(static_cast<uint64_t>(limits_.body_limit_bytes));
    parser_->eager(true);
    if (buffer_.size() > 0) return ParseBuffered();  // pipelined bytes already here
    SetDeadline(limits_.idle_timeout_ms);
    socket_.async_read_some(buffer_.prepare(kFirstReadBytes),
                            beast::bind_front_handler(&Session::OnFirstBytes, shared_from_this()));
  }

  void OnFirstBytes(beast::error_code ec, size_t bytes) {
    if (ec) return DoClose();  // idle timeout, EOF or reset
    buffer_.commit(bytes);
    ParseBuffered();
  }

  // Most requests arrive whole in the first read: parse them in place, and
  // only go back to the socket (under read_timeout_ms) for the rest.
  void ParseBuffered() {
    beast::error_code ec;
    const size_t used = parser_->put(buffer_.data(), ec);
    buffer_.consume(used);
    if (ec == http::error::need_more || (!ec && !parser_->is_done())) return DoReadRequest();
    OnRead(ec, used);
  }

  void DoReadRequest() {
    SetDeadline(limits_.read_timeout_ms);
    http::async_read(socket_, buffer_, *parser_,
                     beast::bind_front_handler(&Session::OnRead, shared_from_this()));
  }

  void OnRead(beast::error_code ec, size_t) {
    if (closed_ || ec == http::error::end_of_stream || ec == net::error::operation_aborted)
      return DoClose();
    if (ec == http::error::body_limit) {
      response_ = service_.TransportError(413, View(parser_->get().target()));
      return Respond(response_, false, 11);
    }
    if (ec && ec.category() == http::make_error_code(http::error::bad_target).category()) {
      response_ = service_.TransportError(400, "");  // malformed HTTP
      return Respond(response_, false, 11);
    }
    if (ec) return DoClose();
    const auto& req = parser_->get();
    HttpRequest request;
    request.method = View(req.method_string());
    request.target = View(req.target());
    request.authorization = View(req[http::field::authorization]);
    request.api_key = View(req["x-api-key"]);
    request.body = req.body();
    service_.Handle(request, &response_);
    const bool keep_alive = req.keep_alive() && !response_.close;
    Respond(response_, keep_alive, req.version());
  }

  // Serializes the response into out_, reused across requests (status line,
  // headers, body): cheaper than a Beast serializer walking a field list.
  void Respond(HttpResponse& r, bool keep_alive, unsigned version) {
    keep_alive_ = keep_alive;
    out_.clear();
    out_.reserve(256 + r.body.size() + 48 * r.headers.size());
    out_ += version == 10 ? "HTTP/1.0 " : "HTTP/1.1 ";
    AppendInt(r.status);
    out_ += ' ';
    // 529 is not in the HTTP registry; Anthropic's overloaded answer.
    const auto reason = r.status == 529
                            ? boost::beast::string_view("Site Overloaded")
                            : http::obsolete_reason(static_cast<http::status>(r.status));
    out_.append(reason.data(), reason.size());
    out_ += "\r\nServer: mockapi\r\nContent-Type: ";
    out_ += r.content_type;
    for (const auto& [name, value] : r.headers) {
      out_ += "\r\n";
      out_ += name;
      out_ += ": ";
      out_ += value;
    }
    if (keep_alive != (version >= 11))
      out_ += keep_alive ? "\r\nConnection: keep-alive" : "\r\nConnection: close";
    stream_interval_us_ = version >= 11 ? r.stream_interval_us : 0;
    if (stream_interval_us_ > 0) {  // paced events, one chunk per write
      streaming_ = true;
      events_written_ = 0;
      events_appended_ = 0;
      events_in_out_ = 0;
      out_ += "\r\nTransfer-Encoding: chunked\r\n\r\n";
      stream_body_.assign(r.body);
      stream_pos_ = 0;
      AppendDueEvents(SteadyClock::time_point::min());  // the first event alone
    } else {
      out_ += "\r\nContent-Length: ";
      AppendInt(static_cast<int64_t>(r.body.size()));
      out_ += "\r\n\r\n";
      out_ += r.body;
    }
    if (r.delay_us <= 0) return DoFirstWrite();
    deadline_ = SteadyClock::time_point::max();  // no timeout while the answer is delayed
    delay_.expires_after(std::chrono::microseconds(r.delay_us));
    delay_.async_wait(beast::bind_front_handler(&Session::OnDelay, shared_from_this()));
  }

  void AppendInt(int64_t v) {
    char buf[24];
    const auto end = std::to_chars(buf, buf + sizeof buf, v).ptr;
    out_.append(buf, end);
  }

  // Event k of a paced stream (k = 0 the first) is due k intervals after the
  // first was written, so the stream's total duration does not drift with
  // the pacer's ticks.
  SteadyClock::time_point DueAt(int64_t k) const {
    return stream_start_ + std::chrono::microseconds(k * stream_interval_us_);
  }

  // Appends the next event of stream_body_ and every later one due by `now`
  // as one HTTP chunk (one write, one chunk: a client sees what was coalesced),
  // and the last chunk after the final event.
  void AppendDueEvents(SteadyClock::time_point now) {
    const size_t begin = stream_pos_;
    do {
      const size_t end = stream_body_.find("\n\n", stream_pos_);
      stream_pos_ = end == std::string::npos ? stream_body_.size() : end + 2;
      ++events_appended_;
      ++events_in_out_;
    } while (stream_pos_ < stream_body_.size() && DueAt(events_appended_) <= now);
    char size[24];
    std::snprintf(size, sizeof size, "%zx\r\n", stream_pos_ - begin);
    out_ += size;
    out_.append(stream_body_, begin, stream_pos_ - begin);
    out_ += "\r\n";
    if (stream_pos_ >= stream_body_.size()) out_ += "0\r\n\r\n";
  }

  void OnDelay(beast::error_code ec) {
    if (ec || closed_) return DoClose();
    DoFirstWrite();
  }

  // The answer's first write; a paced stream's later events are timed from it.
  void DoFirstWrite() {
    if (streaming_) stream_start_ = SteadyClock::now();
    DoWrite();
  }

  // A direct non-blocking send first (the whole answer fits the socket
  // buffer nearly always): no operation object, no trip through the
  // scheduler. Only the rest, if any, goes async under read_timeout_ms.
  void DoWrite() {
    beast::error_code ec;
    const size_t sent = socket_.write_some(net::buffer(out_), ec);
    if (ec == net::error::would_block || ec == net::error::try_again) {
      ec = {};
    } else if (ec) {
      return DoClose();
    }
    const size_t done = ec ? 0 : sent;
    if (done == out_.size()) return OnWrite({}, done, /*direct=*/true);
    SetDeadline(limits_.read_timeout_ms);
    net::async_write(
        socket_, net::buffer(out_.data() + done, out_.size() - done),
        [self = shared_from_this()](beast::error_code e, size_t n) { self->OnWrite(e, n, false); });
  }

  void OnWrite(beast::error_code ec, size_t, bool direct) {
    if (ec || closed_) return DoClose();
    if (streaming_) {
      events_written_ += events_in_out_;  // the events this write carried
      events_in_out_ = 0;
      streaming_ = stream_pos_ < stream_body_.size();
      if (streaming_) {  // more events to pace out
        deadline_ = SteadyClock::time_point::max();
        return pacer_.Schedule(shared_from_this(), DueAt(events_appended_), limits_.stream_tick_us);
      }
    }
    if (!keep_alive_) return DoDrain();
    // Pipelined requests already buffered are answered from the next handler
    // run, so that a long pipeline does not deepen this call stack.
    if (direct && buffer_.size() > 0) {
      return net::post(socket_.get_executor(),
                       beast::bind_front_handler(&Session::DoRead, shared_from_this()));
    }
    DoRead();
  }

  // Half-close, then discard what the client still sends (the rest of a
  // too-large body) so that it reads our answer instead of a reset.
  void DoDrain() {
    beast::error_code ec;
    socket_.shutdown(tcp::socket::shutdown_send, ec);
    if (ec) return DoClose();
    buffer_.clear();
    OnDrain({}, 0);
  }

  void OnDrain(beast::error_code ec, size_t) {
    if (ec || closed_ || ++drain_reads_ > kMaxDrainReads) return DoClose();
    buffer_.clear();
    SetDeadline(limits_.read_timeout_ms);
    socket_.async_read_some(buffer_.prepare(65536),
                            beast::bind_front_handler(&Session::OnDrain, shared_from_this()));
  }

  void DoClose() {
    if (closed_) return;
    closed_ = true;
    if (streaming_ && response_.on_stream_cut) {  // the client left mid-stream
      streaming_ = false;
      response_.on_stream_cut(events_written_);
    }
    beast::error_code ec;
    socket_.shutdown(tcp::socket::shutdown_both, ec);
    socket_.close(ec);
    deadline_timer_.cancel();
    delay_.cancel();
  }

  Socket socket_;
  Timer delay_;           // simulated latency (until the first byte of the answer)
  Timer deadline_timer_;  // idle and read timeouts (SetDeadline)
  Service& service_;
  StreamPacer& pacer_;  // this connection's thread's
  beast::flat_buffer buffer_;
  std::optional<http::request_parser<http::string_body>> parser_;
  HttpResponse response_;    // reused: its strings and header list keep their capacity
  std::string out_;          // the serialized response (or the next chunk of a stream)
  std::string stream_body_;  // a paced stream's events
  size_t stream_pos_ = 0;
  int64_t stream_interval_us_ = 0;
  bool streaming_ = false;                // a paced stream is being written
  int64_t events_written_ = 0;            // its events in writes that completed
  int64_t events_appended_ = 0;           // its events put into out_ so far
  int64_t events_in_out_ = 0;             // its events in the write under way
  SteadyClock::time_point stream_start_;  // its first event's write
  SteadyClock::time_point deadline_ = SteadyClock::time_point::max();
  SteadyClock::time_point armed_at_;
  bool armed_ = false;
  bool closed_ = false;
  bool keep_alive_ = true;
  ConnectionLimits limits_;
  int drain_reads_ = 0;
};

}  // namespace

namespace internal {

void ServeConnection(ServerSocket&& socket, Service& service, StreamPacer& pacer) {
  std::make_shared<Session>(std::move(socket), service, pacer)->Run();
}

}  // namespace internal
}  // namespace bp::mockapi
