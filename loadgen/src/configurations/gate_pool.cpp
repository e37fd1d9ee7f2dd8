// The gate threads (gate_pool.h): one deque of jobs per thread; Stop drains
// the queued releases until a deadline.
#include "bp/loadgen/gate_pool.h"

#include <algorithm>
#include <condition_variable>
#include <deque>
#include <utility>

namespace bp::loadgen {

struct GatePool::Worker {
  explicit Worker(std::unique_ptr<Admission> a) : gate(std::move(a)) {}

  // One queued job: exactly one of the two is set.
  struct Entry {
    Job admit;
    ReleaseJob release;
  };

  std::unique_ptr<Admission> gate;
  std::mutex mu;
  std::condition_variable cv;
  std::deque<Entry> jobs;   // guarded by mu
  bool stop = false;        // guarded by mu
  int64_t deadline_us = 0;  // the drain's end on the pool clock; guarded by mu
  StopReport report;        // written by the thread, read after join
  std::thread thread;

  void Loop(const Clock& clock) {
    for (;;) {
      Entry job;
      int64_t deadline = 0;
      bool draining = false;
      {
        std::unique_lock<std::mutex> lock(mu);
        cv.wait(lock, [this] { return stop || !jobs.empty(); });
        if (jobs.empty()) return;  // stopped and drained
        job = std::move(jobs.front());
        jobs.pop_front();
        draining = stop;
        deadline = deadline_us;
      }
      if (!draining) {
        if (job.admit) {
          job.admit(*gate);
        } else {
          job.release(*gate);
        }
        continue;
      }
      if (job.admit) {
        ++report.dropped_admits;  // its decision has no engine to go to
      } else if (clock.NowUs() >= deadline) {
        ++report.skipped;
      } else if (job.release(*gate).ok()) {
        ++report.released;
      } else {
        ++report.failed;
      }
    }
  }
};

GatePool::GatePool(int threads, const AdmissionFactory& make, const Clock* clock)
    : clock_(clock != nullptr ? *clock : SteadyClock::Instance()) {
  for (int i = 0; i < std::max(1, threads); ++i) {
    workers_.push_back(std::make_unique<Worker>(make()));
  }
  for (auto& w : workers_) {
    w->thread = std::thread([w = w.get(), c = &clock_] { w->Loop(*c); });
  }
}

GatePool::~GatePool() { Stop(0); }

void GatePool::Enqueue(Job admit, ReleaseJob release) {
  Worker* w = nullptr;
  {
    std::lock_guard<std::mutex> lock(next_mu_);
    if (stopping_) return;
    w = workers_[next_++ % workers_.size()].get();
  }
  {
    std::lock_guard<std::mutex> lock(w->mu);
    w->jobs.push_back(Worker::Entry{std::move(admit), std::move(release)});
  }
  w->cv.notify_one();
}

void GatePool::Submit(Job job) { Enqueue(std::move(job), nullptr); }

void GatePool::SubmitRelease(ReleaseJob job) { Enqueue(nullptr, std::move(job)); }

void GatePool::BeginStop(int drain_ms) {
  {
    // Under next_mu_ so that no Submit* queues a job after the flags are set.
    std::lock_guard<std::mutex> lock(next_mu_);
    if (stopping_) return;
    stopping_ = true;
    const int64_t deadline = clock_.NowUs() + int64_t{std::max(0, drain_ms)} * 1000;
    for (auto& w : workers_) {
      std::lock_guard<std::mutex> wlock(w->mu);
      w->stop = true;
      w->deadline_us = deadline;
    }
  }
  for (auto& w : workers_) w->cv.notify_one();
}

GatePool::StopReport GatePool::Stop(int drain_ms) {
  BeginStop(drain_ms);
  if (joined_) return {};
  joined_ = true;
  StopReport out;
  for (auto& w : workers_) {
    if (w->thread.joinable()) w->thread.join();
    out.released += w->report.released;
    out.failed += w->report.failed;
    out.skipped += w->report.skipped;
    out.dropped_admits += w->report.dropped_admits;
  }
  return out;
}

GateCounters GatePool::counters() const {
  GateCounters sum;
  for (const auto& w : workers_) {
    const GateCounters c = w->gate->counters();
    sum.admits += c.admits;
    sum.defers += c.defers;
    sum.rejects += c.rejects;
    sum.fail_opens += c.fail_opens;
    sum.releases += c.releases;
    sum.release_errors += c.release_errors;
    sum.timeouts += c.timeouts;
    sum.connection_errors += c.connection_errors;
    sum.breaker_opens += c.breaker_opens;
    sum.breaker_skips += c.breaker_skips;
    sum.fail_opens_unreachable += c.fail_opens_unreachable;
    sum.fail_opens_timed_out += c.fail_opens_timed_out;
    sum.fail_opens_unconfigured += c.fail_opens_unconfigured;
    sum.fail_opens_server_error += c.fail_opens_server_error;
    sum.reseeds += c.reseeds;
  }
  return sum;
}

}  // namespace bp::loadgen
