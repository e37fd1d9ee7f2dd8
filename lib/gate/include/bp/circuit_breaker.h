// bp::CircuitBreaker - fail fast while a Valkey target does not answer.
//
// A paused or stopped-but-accepting server (CLIENT PAUSE, SIGSTOP, a
// saturated node) makes every call wait its full command timeout before the
// gate fails open (I3), so a worker pool passes only threads / timeout calls
// per second. The breaker turns that into one timeout per cool-off:
//
//   closed    calls go to the server. A transport failure (timeout, refused
//             or reset connection, no owner for the slot) opens it.
//   open      calls are not sent: Allow() is false, the gate fails open at
//             once. After cool_off_ms (from the failure that opened it) the
//             next Allow() is true for that one caller, the probe, and the
//             breaker is half-open.
//   half-open the probe's call is in flight; other callers are refused as
//             while open. The probe's success closes the breaker, its failure
//             opens it again for another cool_off_ms (a new open).
// Any answer of the server (an error reply too: the server is alive) is a
// success and closes the breaker from any state. A probe that made no call
// (e.g. a reconnect attempt not yet due) hands its turn back with Abandon().
// A failure while already open (a call that started before it opened)
// changes nothing.
//
// Per target and connection: each bp::Gate owns one (GateOptions::
// breaker_cool_off_ms), so on a cluster a stopped primary opens the breakers
// of its own targets' Gates only. This is the classic pattern (Nygard,
// "Release It!", 2007, chapter 5, Stability Patterns), with a single probe.
//
// Units: milliseconds for cool_off_ms; time from the injected bp::Clock
// (microseconds), so tests move a FakeClock instead of sleeping.
// cool_off_ms = 0 disables the breaker: Allow() is always true and it never
// opens (opens() stays 0).
// Thread-safety: every method is thread-safe (an internal mutex); Allow()
// does not wait for a call in flight.
#pragma once

#include <cstdint>
#include <mutex>

#include "bp/clock.h"

namespace bp {

enum class BreakerState { kClosed, kOpen, kHalfOpen };
// "closed", "open", "half-open".
const char* BreakerStateName(BreakerState state);

class CircuitBreaker {
 public:
  // `clock` must outlive the breaker. cool_off_ms < 0 is treated as 0.
  CircuitBreaker(int cool_off_ms, const Clock& clock);

  // Whether the caller may send its call now (see the states above). A true
  // answer in the open state, once the cool-off has passed, makes the caller
  // the probe: it must then report OnSuccess, OnFailure or Abandon.
  bool Allow();
  // The server answered: closed.
  void OnSuccess();
  // The call failed in transport: closed or half-open -> open (counted in
  // opens()), the cool-off starting now. No change while open.
  void OnFailure();
  // The probe made no call: half-open -> open, keeping the time it opened,
  // so the next Allow() may probe at once. No change in other states.
  void Abandon();

  BreakerState state() const;
  uint64_t opens() const;  // transitions to open since construction
  int cool_off_ms() const { return cool_off_ms_; }

 private:
  const int cool_off_ms_;
  const Clock& clock_;
  mutable std::mutex mu_;
  BreakerState state_ = BreakerState::kClosed;  // guarded by mu_
  int64_t opened_us_ = 0;                       // clock time it last opened; guarded
  uint64_t opens_ = 0;                          // guarded by mu_
};

}  // namespace bp
