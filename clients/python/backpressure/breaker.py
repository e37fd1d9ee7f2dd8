"""A circuit breaker per Gate: fail fast while the server does not answer.

The Python twin of bp::CircuitBreaker (lib/gate/include/bp/circuit_breaker.h),
with the same states, transitions and default cool-off (1000 ms), so a dead
or paused server costs one command timeout per cool-off instead of one per
call:

  closed     calls go to the server. A transport failure (timeout, refused
             or reset connection) opens it.
  open       calls are not sent: allow() is False, the gate fails open at
             once. After cool_off_ms (from the failure that opened it) the
             next allow() is True for that one caller, the probe, and the
             breaker is half-open.
  half-open  the probe's call is in flight; others are refused as while
             open. Its success closes the breaker, its failure opens it again.

Any answer of the server (an error reply too) is a success. A failure while
already open changes nothing. cool_off_ms = 0 disables the breaker. The clock
is injected (a function returning seconds, time.monotonic by default), so
tests move it instead of sleeping. Thread-safe (one lock).
"""

import threading
import time

CLOSED, OPEN, HALF_OPEN = "closed", "open", "half-open"


class CircuitBreaker:
    def __init__(self, cool_off_ms=1000, clock=time.monotonic):
        self.cool_off_ms = max(0, cool_off_ms)
        self._clock = clock
        self._lock = threading.Lock()
        self.state = CLOSED
        self.opens = 0          # transitions to open since construction
        self._opened_s = 0.0

    def allow(self):
        """Whether the caller may send its call now; True while open (after
        the cool-off) makes the caller the probe."""
        if self.cool_off_ms == 0:
            return True
        with self._lock:
            if self.state == CLOSED:
                return True
            if self.state == HALF_OPEN:
                return False
            now = self._clock()
            # A clock that went back probes at once rather than never.
            if self._opened_s <= now < self._opened_s + self.cool_off_ms / 1000:
                return False
            self.state = HALF_OPEN
            return True

    def on_success(self):
        if self.cool_off_ms:
            with self._lock:
                self.state = CLOSED

    def on_failure(self):
        if self.cool_off_ms == 0:
            return
        with self._lock:
            if self.state == OPEN:
                return
            self.state = OPEN
            self._opened_s = self._clock()
            self.opens += 1
