// The io thread's stream pacer (stream_pacer.h): one min-heap of due times,
// one timer, at most one wake per tick.
#include "stream_pacer.h"

#include <algorithm>

namespace bp::mockapi::internal {
namespace {

// std::push_heap keeps the greatest on top; ordering by "later" keeps the earliest.
bool Later(const auto& a, const auto& b) { return a.due > b.due; }

}  // namespace

void StreamPacer::Schedule(std::shared_ptr<PacedStream> stream, Clock::time_point due,
                           int64_t tick_us) {
  tick_ = std::chrono::microseconds(std::max<int64_t>(1, tick_us));
  heap_.push_back({due, std::move(stream)});
  std::push_heap(heap_.begin(), heap_.end(), Later<Entry, Entry>);
  ArmFor(heap_.front().due);
}

// Arms the timer for the wake that serves `due`: not before it, and not
// within a tick of the last wake. An armed timer is moved only to an earlier
// time (expires_at cancels the pending wait; its handler sees operation_aborted).
void StreamPacer::ArmFor(Clock::time_point due) {
  const Clock::time_point at = std::max(due, last_wake_ + tick_);
  if (armed_ && at >= armed_at_) return;
  armed_ = true;
  armed_at_ = at;
  timer_.expires_at(at);
  timer_.async_wait([this](const boost::system::error_code& ec) { OnTick(ec); });
}

void StreamPacer::OnTick(const boost::system::error_code& ec) {
  if (ec == boost::asio::error::operation_aborted) return;  // moved earlier, or shut down
  armed_ = false;
  const Clock::time_point now = Clock::now();
  last_wake_ = now;
  ready_.clear();
  while (!heap_.empty() && heap_.front().due <= now) {
    std::pop_heap(heap_.begin(), heap_.end(), Later<Entry, Entry>);
    ready_.push_back(std::move(heap_.back()));
    heap_.pop_back();
  }
  // Streams schedule their next event from OnDue, into heap_ (never ready_).
  for (Entry& e : ready_) e.stream->OnDue(now);
  ready_.clear();
  if (!heap_.empty()) ArmFor(heap_.front().due);
}

}  // namespace bp::mockapi::internal
