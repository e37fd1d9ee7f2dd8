"""The gate client: admit before an API call, release after it
(docs/protocol.md). One Gate per target and process; its methods may be
called from several threads (redis-py's connection pool is thread-safe; the
counters take a lock).

Fail-open: when the server is unreachable, times out or answers an error
(an unconfigured target too), admit answers Admit(ticket=None,
fail_open=True), counts it in counters["fail_opens"] and logs at most one
warning per warn_interval_s. The worker's availability never depends on the
gate's. redis-py reconnects on the next call, so gating resumes as soon as
the server and the target's configuration are back.
"""

import logging
import re
import threading
import time
from dataclasses import dataclass, field
from typing import Optional, Union
from urllib.parse import urlsplit

import redis
import redis.cluster
import redis.exceptions

from .scripts import load_scripts

log = logging.getLogger("backpressure")

TENANT_RULE = "[A-Za-z0-9_.-]{1,128}"
_TENANT = re.compile(r"[A-Za-z0-9_.\-]{1,128}")
INVALID_REQUEST = ("invalid request: tenant must match [A-Za-z0-9_.-]{1,128}, priority >= 1, "
                   "costs >= 0")
MODES = ("estimate", "reconcile", "reservation")


def valid_tenant(name):
    """The tenant rule of prelude.lua: 1-128 bytes of [A-Za-z0-9_.-]."""
    return isinstance(name, str) and _TENANT.fullmatch(name) is not None


def _count(x):
    return isinstance(x, int) and not isinstance(x, bool) and x >= 0


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
    reason: str = ""          # fail-open: why


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
    a lost server costs a caller at most about that long.
    """

    def __init__(self, target, url="redis://127.0.0.1:6379", mode="reconcile",
                 queue_ttl_ms=10000, timeout_s=0.2, lua_dir=None, warn_interval_s=10.0):
        if not target or "{" in target or "}" in target:
            raise ValueError(f"target {target!r}: must be non-empty without '{{' or '}}'")
        if mode not in MODES:
            raise ValueError(f"mode {mode!r}: must be one of {', '.join(MODES)}")
        self.target, self.url, self.mode = target, url, mode
        self.queue_ttl_ms, self.timeout_s = queue_ttl_ms, timeout_s
        self.warn_interval_s = warn_interval_s
        self.key = "bp:{%s}:state" % target
        self.scripts = load_scripts(lua_dir)
        self._client = None
        self._lock = threading.Lock()
        self._last_warn = None
        self.counters = dict(admits=0, defers=0, rejects=0, fail_opens=0, releases=0,
                             release_errors=0, duplicate_releases=0)

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

    def _bump(self, name):
        with self._lock:
            self.counters[name] += 1

    def _fail_open(self, why):
        now = time.monotonic()
        with self._lock:
            self.counters["fail_opens"] += 1
            n = self.counters["fail_opens"]
            warn = self._last_warn is None or now - self._last_warn >= self.warn_interval_s
            if warn:
                self._last_warn = now
            if isinstance(self._client, redis.cluster.RedisCluster) and "cluster" in why.lower():
                self._client = None  # rebuild the slot map from the start nodes
        if warn:
            log.warning("bp gate '%s': failing open (%d so far): %s", self.target, n, why)
        return Admit(ticket=None, fail_open=True, reason=why)

    # ------------------------------------------------------------ admission
    def admit(self, tenant, priority=1, requests=1, tokens=0, max_tokens=0, now_ms=0):
        """Admit(ticket) | Defer(delta_ms, binding) | Reject(reason).

        tokens: the estimated tokens of the call; max_tokens: its completion
        bound (debited in reservation mode). now_ms: tests only (0 = the
        server's clock). Invalid input is a Reject with INVALID_REQUEST,
        decided here without a round trip."""
        if not (valid_tenant(tenant) and isinstance(priority, int) and not isinstance(priority, bool)
                and priority >= 1 and _count(requests) and _count(tokens) and _count(max_tokens)):
            self._bump("rejects")
            return Reject(INVALID_REQUEST)
        args = [tenant, priority, requests, tokens, max_tokens, self.mode, "none",
                self.queue_ttl_ms, now_ms]
        try:
            reply = self._eval("admit", args)
        except (redis.exceptions.RedisError, OSError) as e:
            return self._fail_open(f"{type(e).__name__}: {e}")
        if not isinstance(reply, list) or len(reply) < 2:
            return self._fail_open(f"admit script: unexpected reply {reply!r}")
        verdict = reply[0]
        if verdict == "ADMIT":
            self._bump("admits")
            return Admit(ticket=Ticket(str(reply[1]), requests, tokens))
        if verdict == "DEFER":
            self._bump("defers")
            return Defer(int(reply[1]), reply[2] if len(reply) > 2 else "fair")
        if verdict == "REJECT":
            self._bump("rejects")
            return Reject(str(reply[1]))
        return self._fail_open(f"admit script: unknown verdict {verdict!r}")

    def release(self, ticket, actual_tokens, actual_requests=None, upstream=None, now_ms=0):
        """Corrects the admission by the usage the provider reported.

        upstream: an Upstream429 when the provider refused the call (the
        bucket keeps the debit, the tenant's share gives the call back).
        Returns True when the server applied it, False when there was nothing
        to release (no ticket, already released, unknown to the server) or
        the server was unreachable (counted in release_errors). A ticket is
        sent at most once, whatever happens."""
        if ticket is None or ticket.id == "0":
            return False
        if ticket.released:
            self._bump("duplicate_releases")
            return False
        reqs = ticket.requests if actual_requests is None else actual_requests
        if not _count(actual_tokens) or not _count(reqs):
            raise ValueError(f"release: actual costs must be integers >= 0, got requests={reqs!r} "
                             f"tokens={actual_tokens!r}")
        ticket.released = True
        args = [ticket.id, reqs, actual_tokens, now_ms]
        if upstream is not None:
            u = upstream
            args += ["429", u.bound, _num(u.retry_after_ms), u.remaining_requests,
                     _num(u.reset_requests_ms), u.remaining_tokens, _num(u.reset_tokens_ms)]
        try:
            applied = self._eval("release", args)
        except (redis.exceptions.RedisError, OSError):
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
