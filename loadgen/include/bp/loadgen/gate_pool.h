// loadgen's gate threads (the bp configuration, bp_configuration.h): gate
// calls block (hiredis, ~0.2-2 ms, up to the command timeout), so they run
// on a fixed set of threads, each owning one bp::Admission (in a run a
// bp::Gate with its own connection, as each worker of a fleet has one).
// Jobs go round-robin; each thread runs its jobs in submission order.
//
// Two kinds of job: an Admit (the admission and the decision it posts back
// to the engine) and a release (Release or ReleaseRefused of an admitted
// call's ticket). At the end of a run Stop drops the queued Admits (the
// engine no longer runs) but drains the queued releases, so reconcile and
// reservation corrections reach Valkey instead of leaving tickets to
// expire (ticket_ttl_ms) with their debits uncorrected; the drain is
// bounded by a deadline, and what it could not release is counted.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

#include "bp/clock.h"
#include "bp/gate.h"

namespace bp::loadgen {

// Makes the Admission one gate thread owns; called once per thread, on the
// caller's thread, before the pool (or configuration) is returned.
using AdmissionFactory = std::function<std::unique_ptr<Admission>()>;

class GatePool {
 public:
  // An Admit job: runs on its thread's Admission.
  using Job = std::function<void(Admission&)>;
  // A release job: returns the release's Status (ok = applied or a no-op
  // for a ticket Valkey no longer has).
  using ReleaseJob = std::function<Status(Admission&)>;

  // What Stop did with the jobs still queued.
  struct StopReport {
    uint64_t released = 0;        // releases run by the drain, ok
    uint64_t failed = 0;          // releases run by the drain, not ok (Valkey
                                  // error, timeout, open breaker)
    uint64_t skipped = 0;         // releases not run: the deadline had passed
    uint64_t dropped_admits = 0;  // Admit jobs dropped (the run is over)
    // Tickets the drain left in Valkey (they expire after ticket_ttl_ms).
    uint64_t unreleased() const { return failed + skipped; }
  };

  // `threads` (at least 1) threads, each owning one make() Admission.
  // `clock` (nullptr = SteadyClock::Instance(); must outlive the pool)
  // times the drain deadline; tests pass a FakeClock.
  GatePool(int threads, const AdmissionFactory& make, const Clock* clock = nullptr);
  // Stop(0) if Stop was not called: queued releases are skipped.
  ~GatePool();
  GatePool(const GatePool&) = delete;
  GatePool& operator=(const GatePool&) = delete;

  // Queue a job on the next thread (round-robin). After Stop: ignored.
  void Submit(Job job);
  void SubmitRelease(ReleaseJob job);

  // Begins the end without waiting: Submit* are ignored from now on, and
  // each thread finishes the job it is running, drops its queued Admits and
  // runs its queued releases in order while the clock is before now +
  // drain_ms (real ms; a release started before the deadline may end up to
  // its command timeout after it, or at once while its gate's breaker is
  // open), skipping the rest. A second call changes nothing. May be called
  // from a job.
  void BeginStop(int drain_ms);
  // BeginStop(drain_ms) unless begun, then joins the threads and reports
  // what they did with the jobs queued at BeginStop (summed over threads).
  // A second call returns an empty report. Not from a job.
  StopReport Stop(int drain_ms);

  // The counters of every thread's Admission, summed.
  GateCounters counters() const;

  // Thread-safety: Submit, SubmitRelease, BeginStop and counters may be
  // called from any thread; Stop from one thread that is not a pool thread.

 private:
  struct Worker;
  void Enqueue(Job admit, ReleaseJob release);

  const Clock& clock_;
  std::vector<std::unique_ptr<Worker>> workers_;
  std::mutex next_mu_;
  size_t next_ = 0;        // guarded by next_mu_
  bool stopping_ = false;  // BeginStop was called; guarded by next_mu_
  bool joined_ = false;    // Stop has joined the threads (Stop's thread only)
};

}  // namespace bp::loadgen
