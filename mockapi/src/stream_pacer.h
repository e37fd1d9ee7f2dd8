// StreamPacer - the one timer of an io thread that paces its streams.
//
// A paced stream (HttpResponse::stream_interval_us) asks for a wake-up at the
// due time of its next event; the pacer keeps every due time of its thread in
// one min-heap and one steady_timer, and wakes at most once per tick
// (MockConfig::stream_tick_ms): at max(earliest due, last wake + tick). On a
// wake every stream whose due time has passed is called once, and writes all
// its events due by then in one send, so events due within one tick go out
// together. An event is so at most one tick (plus the timer's own latency)
// late; with nothing due the timer is not armed (no busy loop, no idle wake).
//
// A timer per event costs an Asio wait and a send per event; one timer per
// thread costs one wait per tick and one send per stream per tick.
//
// Thread-safety: none. A pacer belongs to one io_context run by one thread;
// Schedule is called, and streams are called back, on that thread only.
#pragma once

#include <boost/asio/io_context.hpp>
#include <boost/asio/steady_timer.hpp>
#include <chrono>
#include <cstdint>
#include <memory>
#include <vector>

namespace bp::mockapi::internal {

// What the pacer calls when a stream's next event is due.
class PacedStream {
 public:
  using Clock = std::chrono::steady_clock;
  virtual ~PacedStream() = default;
  // `now`: the wake's clock reading; the stream writes every event due by then
  // and, if more remain, schedules its next due time again.
  virtual void OnDue(Clock::time_point now) = 0;
};

class StreamPacer {
 public:
  using Clock = PacedStream::Clock;
  using Executor = boost::asio::io_context::executor_type;

  explicit StreamPacer(Executor executor) : timer_(executor) {}
  StreamPacer(const StreamPacer&) = delete;
  StreamPacer& operator=(const StreamPacer&) = delete;

  // Calls `stream->OnDue` on this thread once `due` has passed, at the first
  // wake at or after it. `tick_us` (> 0) is the current tick, read per call so
  // that a PUT of stream_tick_ms applies from the next scheduled event. The
  // pacer holds `stream` until then.
  void Schedule(std::shared_ptr<PacedStream> stream, Clock::time_point due, int64_t tick_us);

 private:
  struct Entry {
    Clock::time_point due;
    std::shared_ptr<PacedStream> stream;
  };
  using Timer = boost::asio::basic_waitable_timer<Clock, boost::asio::wait_traits<Clock>, Executor>;

  void ArmFor(Clock::time_point due);
  void OnTick(const boost::system::error_code& ec);

  Timer timer_;
  std::vector<Entry> heap_;   // min-heap on due (std::push_heap with Later)
  std::vector<Entry> ready_;  // scratch of one wake, reused
  std::chrono::microseconds tick_{2000};
  Clock::time_point last_wake_{};
  Clock::time_point armed_at_{};
  bool armed_ = false;
};

}  // namespace bp::mockapi::internal
