// A circuit breaker per Gate: fail fast while the server does not answer.
//
// The Node twin of bp::CircuitBreaker (lib/gate/include/bp/circuit_breaker.h)
// with the same states, transitions and default cool-off (1000 ms), so a dead
// or paused server costs one command timeout per cool-off instead of one per
// call:
//   closed     calls go to the server; a transport failure (timeout, refused
//              or reset connection) opens it.
//   open       calls are not sent: allow() is false, the gate fails open at
//              once. After coolOffMs (from the failure that opened it) the
//              next allow() is true for that one caller, the probe: half-open.
//   half-open  the probe's call is in flight; others are refused as while
//              open. Its success closes the breaker, its failure opens it again.
// Any answer of the server (an error reply too) is a success; a failure while
// already open changes nothing; coolOffMs = 0 disables it. The clock is
// injected (a function returning ms, performance.now by default), so tests
// move it instead of sleeping.
export class CircuitBreaker {
  constructor(coolOffMs = 1000, clock = () => performance.now()) {
    this.coolOffMs = Math.max(0, coolOffMs);
    this.clock = clock;
    this.state = "closed";
    this.opens = 0;  // transitions to open since construction
    this.openedMs = 0;
  }

  allow() {
    if (this.coolOffMs === 0 || this.state === "closed") return true;
    if (this.state === "half-open") return false;
    const now = this.clock();
    // A clock that went back probes at once rather than never.
    if (now >= this.openedMs && now < this.openedMs + this.coolOffMs) return false;
    this.state = "half-open";
    return true;
  }

  onSuccess() { if (this.coolOffMs) this.state = "closed"; }

  onFailure() {
    if (this.coolOffMs === 0 || this.state === "open") return;
    this.state = "open";
    this.openedMs = this.clock();
    this.opens++;
  }
}
