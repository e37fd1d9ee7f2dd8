"""The gate client: admit before an API call, release after it
(docs/protocol.md). One Gate per target and process; its methods may be
called from several threads (redis-py's connection pool is thread-safe; the
counters take a lock).

Fail-open: when the server is unreachable, times out or answers an error,
admit answers Admit(ticket=None, fail_open=True, cause=...), counts it in
counters["fail_opens"] and in the cause's counter, and logs at most one
warning per warn_interval_s. The causes are the C++ client's
(bp::FailOpenCauseName): "unreachable", "timed out", "target not configured",
"server error". The worker's availability never depends on the gate's.

A transport failure opens the Gate's circuit breaker (breaker.py, the C++
default of 1000 ms): for that long calls fail open at once, then one call
probes the server. redis-py reconnects on the next call that is sent.

An unconfigured target (its store lost its state: a restart without
persistence, a failover, a flush) is re-seeded from declared_config when one
is given: one configure.lua "seed" call, which writes only while the target
is still unconfigured (so racing workers write it once), then the admission
is retried once. At most one attempt per reseed_interval_ms per Gate; one
warning per process and target that hot changes made since the declared
configuration was written are lost (docs/store-restart.md).
"""

import logging
import sys
import threading
import time
from dataclasses import dataclass
from typing import Optional, Union
from urllib.parse import urlsplit

try:
    import redis
    import redis.cluster
    import redis.exceptions
except ImportError as e:  # a Python without the redis package: say which one and how to get it
    raise ImportError(
        f"backpressure needs the redis package (>= 4.3), missing from {sys.executable}: "
        "Debian's /usr/bin/python3 has it after `apt-get install python3-redis` "
        "(scripts/setup.sh does that); another Python needs `pip install redis`") from e

from .breaker import CircuitBreaker
from .declared import read_declared_config
from .rules import INVALID_REQUEST, TENANT_RULE, count, valid_request, valid_tenant  # noqa: F401
from .scripts import load_scripts

log = logging.getLogger("backpressure")

MODES = ("estimate", "reconcile", "reservation")
# bp::FailOpenCauseName's names, and the counter of each.
UNREACHABLE, TIMED_OUT, NOT_CONFIGURED, SERVER_ERROR = (
    "unreachable", "timed out", "target not configured", "server error")
CAUSE_COUNTERS = {UNREACHABLE: "fail_opens_unreachable", TIMED_OUT: "fail_opens_timed_out",
                  NOT_CONFIGURED: "fail_opens_unconfigured", SERVER_ERROR: "fail_opens_server_error"}
# admit.lua's error for a target without caps.
UNCONFIGURED_REPLY = "bp: target not configured"

_reseed_warned = set()
_reseed_warned_lock = threading.Lock()


def _claim_reseed_warning(target):
    """True once per process and target, whatever the number of Gates."""
    with _reseed_warned_lock:
        if target in _reseed_warned:
            return False
        _reseed_warned.add(target)
        return True


@dataclass
class Ticket:
    """An admission to release once. id "0": nothing to release."""
    id: str
    requests: int
    tokens: int
    released: bool = False


@dataclass
class Admit:
    ticket: Optional[Ticket]  # None when failed open (or estimate mode)
    fail_open: bool = False
    reason: str = ""          # fail-open: why, in words
    cause: str = ""           # fail-open: one of CAUSE_COUNTERS' keys
    # Admitted ahead (admit's ahead_ms > 0): call the provider this many ms
    # from now, not before; 0 = at once. The admission is already debited.
    start_in_ms: int = 0


@dataclass
class Defer:
    delta_ms: int             # ask again after this many ms (1..60000)
    binding: str = "fair"     # "fair", "l1:requests", "l1:tokens" or "strict"


@dataclass
class Reject:
    reason: str


@dataclass
class Upstream429:
    """What the provider said with its 429 (numbers < 0: absent; times in ms)."""
    bound: str = ""           # "requests", "tokens" or "" (unknown)
    retry_after_ms: float = -1
    remaining_requests: int = -1
    reset_requests_ms: float = -1
    remaining_tokens: int = -1
    reset_tokens_ms: float = -1


@dataclass
class RateLimits:
    """A served call's rate-limit headers (numbers < 0: absent): remaining
    budget (x-ratelimit-remaining-*) and the time until it is fully restored
    in ms (x-ratelimit-reset-*, parsed from Go durations; Anthropic's RFC 3339
    reset minus now). Fed to the adaptive caps' header rule (docs/gate.md)."""
    remaining_requests: int = -1
    reset_requests_ms: float = -1
    remaining_tokens: int = -1
    reset_tokens_ms: float = -1


Decision = Union[Admit, Defer, Reject]


def _num(v):
    return "%.17g" % v if isinstance(v, float) else str(v)


def connect(url, timeout_s):
    """A redis-py client for redis://host:port[/db], or a cluster client for
    redis+cluster://host:port[,host:port...] (any node; the rest is found)."""
    if url.startswith("redis+cluster://"):
        hosts = urlsplit(url).netloc.split("@")[-1]
        nodes = []
        for hp in hosts.split(","):
            host, _, port = hp.rpartition(":")
            nodes.append(redis.cluster.ClusterNode(host or "127.0.0.1", int(port or 6379)))
        return redis.cluster.RedisCluster(startup_nodes=nodes, decode_responses=True,
                                          socket_timeout=timeout_s,
                                          socket_connect_timeout=timeout_s)
    return redis.Redis.from_url(url, decode_responses=True, socket_timeout=timeout_s,
                                socket_connect_timeout=timeout_s)


class Gate:
    """Admission against one target (docs/protocol.md).

    url: redis://..., or redis+cluster://... for a cluster. mode: "reconcile"
    (default), "reservation" or "estimate". timeout_s bounds each command;
    a lost server costs a caller at most about that long, then the breaker
    answers at once for breaker_cool_off_ms (0: no breaker). declared_config:
    the target's configuration to re-seed it with (a dict, a JSON text or a
    file path, as `bpctl export` prints it; None: an unconfigured target
    fails open); ValueError here when it is invalid. clock: seconds, for the
    intervals (tests move it).
    """

    def __init__(self, target, url="redis://127.0.0.1:6379", mode="reconcile",
                 queue_ttl_ms=10000, timeout_s=0.2, lua_dir=None, warn_interval_s=10.0,
                 declared_config=None, breaker_cool_off_ms=1000, reseed_interval_ms=1000,
                 clock=time.monotonic):
        if not target or "{" in target or "}" in target:
            raise ValueError(f"target {target!r}: must be non-empty without '{{' or '}}'")
        if mode not in MODES:
            raise ValueError(f"mode {mode!r}: must be one of {', '.join(MODES)}")
        self.target, self.url, self.mode = target, url, mode
        self.queue_ttl_ms, self.timeout_s = queue_ttl_ms, timeout_s
        self.warn_interval_s = warn_interval_s
        self.key = "bp:{%s}:state" % target
        self.scripts = load_scripts(lua_dir)
        self.seed = None if declared_config is None else read_declared_config(declared_config)
        self.reseed_interval_ms = reseed_interval_ms
        self.breaker = CircuitBreaker(breaker_cool_off_ms, clock)
        self._clock = clock
        self._client = None
        self._lock = threading.Lock()
        self._last_warn = None
        self._last_reseed = None
        self._transport_cause = UNREACHABLE
        self.counters = dict(admits=0, defers=0, rejects=0, fail_opens=0, releases=0,
                             release_errors=0, duplicate_releases=0, breaker_skips=0, reseeds=0,
                             **{c: 0 for c in CAUSE_COUNTERS.values()})

    # ------------------------------------------------------------ transport
    def _redis(self):
        with self._lock:
            if self._client is None:
                self._client = connect(self.url, self.timeout_s)
            return self._client

    def _eval(self, name, args):
        """EVALSHA the script; on NOSCRIPT (restart, failover, flush) EVAL its
        text once, which runs it and caches it on that node."""
        s = self.scripts[name]
        r = self._redis()
        try:
            return r.evalsha(s.sha, 1, self.key, *args)
        except redis.exceptions.NoScriptError:
            return r.eval(s.text, 1, self.key, *args)
        except redis.exceptions.ResponseError as e:
            if str(e).startswith("NOSCRIPT"):
                return r.eval(s.text, 1, self.key, *args)
            raise

    def _call(self, name, args):
        """(reply, None) or (None, (cause, reason)): one script call through
        the breaker. An error reply is an answer (the breaker closes)."""
        if not self.breaker.allow():
            self._bump("breaker_skips")
            return None, (self._transport_cause,
                          f"circuit breaker open: a gate call to valkey "
                          f"{'timed out' if self._transport_cause == TIMED_OUT else 'found it unreachable'}"
                          f"; calls fail open without waiting for {self.breaker.cool_off_ms} ms, "
                          f"then one probe")
        try:
            reply = self._eval(name, args)
        except redis.exceptions.ResponseError as e:
            self.breaker.on_success()
            cause = NOT_CONFIGURED if UNCONFIGURED_REPLY in str(e) else SERVER_ERROR
            return None, (cause, f"{type(e).__name__}: {e}")
        except (redis.exceptions.RedisError, OSError) as e:
            timed_out = isinstance(e, (redis.exceptions.TimeoutError, TimeoutError))
            self._transport_cause = TIMED_OUT if timed_out else UNREACHABLE
            self.breaker.on_failure()
            return None, (self._transport_cause, f"{type(e).__name__}: {e}")
        self.breaker.on_success()
        return reply, None

    def _bump(self, name):
        with self._lock:
            self.counters[name] += 1

    def _fail_open(self, cause, why):
        now = self._clock()
        with self._lock:
            self.counters["fail_opens"] += 1
            self.counters[CAUSE_COUNTERS[cause]] += 1
            n = self.counters["fail_opens"]
            warn = self._last_warn is None or now - self._last_warn >= self.warn_interval_s
            if warn:
                self._last_warn = now
            if isinstance(self._client, redis.cluster.RedisCluster) and "cluster" in why.lower():
                self._client = None  # rebuild the slot map from the start nodes
        if warn:
            log.warning("bp gate '%s': failing open (%d so far, %s): %s", self.target, n, cause,
                        why)
        return Admit(ticket=None, fail_open=True, reason=why, cause=cause)

    def _reseed(self, now_ms):
        """None when the seed call was made (by this Gate or a racing one),
        else why not."""
        if self.seed is None:
            return "target not configured and no declared configuration to re-seed it"
        now = self._clock()
        with self._lock:
            if (self._last_reseed is not None
                    and now - self._last_reseed < self.reseed_interval_ms / 1000):
                return (f"target not configured; the last re-seed attempt was within "
                        f"{self.reseed_interval_ms} ms")
            self._last_reseed = now
        wrote, err = self._call("configure", ["seed", now_ms, *self.seed])
        if err is not None:
            return f"target not configured; re-seed failed: {err[1]}"
        if wrote == 1:
            self._bump("reseeds")
            if _claim_reseed_warning(self.target):
                log.warning("bp gate '%s': the target was unconfigured (its store lost its state: "
                            "a restart without persistence, a failover or a flush); re-seeded it "
                            "from the declared configuration, with empty buckets. Hot changes "
                            "made since that configuration was written are lost; keep it current "
                            "with `bpctl export` after each change (docs/store-restart.md)",
                            self.target)
        return None

    # ------------------------------------------------------------ admission
    def admit(self, tenant, priority=1, requests=1, tokens=0, max_tokens=0, now_ms=0,
              ahead_ms=0):
        """Admit(ticket, start_in_ms) | Defer(delta_ms, binding) | Reject(reason).

        tokens: the estimated tokens of the call; max_tokens: its completion
        bound (debited in reservation mode). now_ms: tests only (0 = the
        server's clock). ahead_ms: the longest wait before calling the
        provider that the caller will keep (0 = never admitted ahead): a
        call only the bucket's refill holds back, at the head of the gate's
        L1 line, whose cost fits in the bucket and whose refill comes within
        min(ahead_ms, four refills of its own cost) is admitted at once with start_in_ms > 0, and the caller must not call
        the provider before start_in_ms from now (docs/clients.md, "Admit
        ahead"). Invalid input is a Reject with INVALID_REQUEST, decided here
        without a round trip."""
        if not valid_request(tenant, priority, requests, tokens, max_tokens, ahead_ms):
            self._bump("rejects")
            return Reject(INVALID_REQUEST)
        args = [tenant, priority, requests, tokens, max_tokens, self.mode, "none",
                self.queue_ttl_ms, now_ms]
        if ahead_ms > 0:  # ARGV[10]; absent keeps the reply {"ADMIT", ticket}
            args.append(ahead_ms)
        reply, err = self._call("admit", args)
        if err is not None and err[0] == NOT_CONFIGURED:
            why = self._reseed(now_ms)
            if why is not None:
                return self._fail_open(NOT_CONFIGURED, why)
            reply, err = self._call("admit", args)  # once
        if err is not None:
            return self._fail_open(*err)
        if not isinstance(reply, list) or len(reply) < 2:
            return self._fail_open(SERVER_ERROR, f"admit script: unexpected reply {reply!r}")
        verdict = reply[0]
        if verdict == "ADMIT":
            self._bump("admits")
            start_in_ms = int(reply[2]) if len(reply) > 2 else 0
            return Admit(ticket=Ticket(str(reply[1]), requests, tokens), start_in_ms=start_in_ms)
        if verdict == "DEFER":
            self._bump("defers")
            return Defer(int(reply[1]), reply[2] if len(reply) > 2 else "fair")
        if verdict == "REJECT":
            self._bump("rejects")
            return Reject(str(reply[1]))
        return self._fail_open(SERVER_ERROR, f"admit script: unknown verdict {verdict!r}")

    def release(self, ticket, actual_tokens, actual_requests=None, upstream=None, now_ms=0,
                rate_limits=None):
        """Corrects the admission by the usage the provider reported.

        upstream: an Upstream429 when the provider refused the call (the
        bucket keeps the debit, the tenant's share gives the call back).
        rate_limits: a RateLimits of a served call (ignored with upstream):
        with a reset > 0 it feeds the adaptive caps' header rule.
        Returns True when the server applied it, False when there was nothing
        to release (no ticket, unknown to the server) or the server was
        unreachable or the breaker open (counted in release_errors; the
        ticket is left to expire). A ticket is sent at most once, whatever
        happens: a second release of it is refused here (counted in
        duplicate_releases). ValueError for costs that are not integers >= 0."""
        if ticket is None or ticket.id == "0":
            return False
        reqs = ticket.requests if actual_requests is None else actual_requests
        if not count(actual_tokens) or not count(reqs):
            raise ValueError(f"release: actual costs must be integers >= 0, got requests={reqs!r} "
                             f"tokens={actual_tokens!r}")
        with self._lock:
            if ticket.released:
                self.counters["duplicate_releases"] += 1
                return False
            ticket.released = True
        args = [ticket.id, reqs, actual_tokens, now_ms]
        if upstream is not None:
            u = upstream
            args += ["429", u.bound, _num(u.retry_after_ms), u.remaining_requests,
                     _num(u.reset_requests_ms), u.remaining_tokens, _num(u.reset_tokens_ms)]
        elif rate_limits is not None and (rate_limits.reset_requests_ms > 0 or
                                          rate_limits.reset_tokens_ms > 0):
            h = rate_limits
            args += ["ok", "", -1, h.remaining_requests, _num(h.reset_requests_ms),
                     h.remaining_tokens, _num(h.reset_tokens_ms)]
        applied, err = self._call("release", args)
        if err is not None:
            self._bump("release_errors")
            return False
        self._bump("releases")
        return applied == 1

    # ------------------------------------------------------------ tools
    def configure(self, fields, mode="set"):
        """Writes configuration fields (docs/protocol.md, configure.lua).
        Returns True when the target has caps. Raises on a server error."""
        args = [mode]
        for k, v in fields.items():
            args += [k, _num(v)]
        return self._eval("configure", args) == 1

    def state(self):
        """The target's state.lua fields as a dict of str -> str | list."""
        flat = self._eval("state", ["state", "none"])
        return {flat[i]: flat[i + 1] for i in range(0, len(flat), 2)}

    def close(self):
        with self._lock:
            if self._client is not None:
                self._client.close()
                self._client = None
