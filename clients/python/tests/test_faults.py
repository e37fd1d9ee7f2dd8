"""Faults and bad input against a real server: the circuit breaker on a
settable clock, fail-open causes with the C++ client's names, the declared
configuration (strict parsing, the seed it writes), and a server killed hard
and replaced by an empty one on the same port: the client fails open, then
re-seeds the target and resumes gating."""

import json
import logging

import pytest

from backpressure import (CAUSE_COUNTERS, Admit, CircuitBreaker, Defer, Gate,
                          read_declared_config)
from conftest import Server, free_port

T0 = 1_700_000_000_000
DECLARED = {"version": 1, "caps": {"requests_per_s": 10, "tokens_per_s": 1000, "burst_s": 1},
            "priority_weights": [0.5, 0.3, 0.2], "tenant_weights": {"acme": 2},
            "tuning": {"slack_ms": 50, "share_rule": "flat"}}


class Clock:
    """Seconds, moved by the test."""

    def __init__(self):
        self.t = 100.0

    def __call__(self):
        return self.t


def test_breaker_states_on_a_settable_clock():
    c = Clock()
    b = CircuitBreaker(1000, c)
    assert b.allow() and b.state == "closed"
    b.on_failure()                                      # closed -> open at 100 s
    assert b.state == "open" and b.opens == 1 and not b.allow()
    c.t = 100.999
    assert not b.allow()                                # 999 ms < cool-off
    c.t = 101.0
    assert b.allow() and b.state == "half-open"         # this caller probes
    assert not b.allow()                                # others wait for the probe
    b.on_failure()                                      # half-open -> open again
    assert b.state == "open" and b.opens == 2
    b.on_failure()                                      # already open: unchanged
    assert b.opens == 2
    c.t = 102.0
    assert b.allow()
    b.on_success()
    assert b.state == "closed" and b.allow()
    off = CircuitBreaker(0, c)
    off.on_failure()
    assert off.allow() and off.opens == 0


def test_causes_are_counted_and_the_breaker_skips_the_dead_server():
    c = Clock()
    g = Gate("dead", url=f"redis://127.0.0.1:{free_port()}", timeout_s=0.5, clock=c)
    first = g.admit("a", 1, 1, 1)
    assert first.fail_open and first.cause == "unreachable" and first.ticket is None
    for _ in range(5):                                  # within the cool-off: no connect
        d = g.admit("a", 1, 1, 1)
        assert d.cause == "unreachable" and d.reason.startswith("circuit breaker open")
    assert g.counters["breaker_skips"] == 5 and g.breaker.opens == 1
    assert g.counters["fail_opens"] == 6 and g.counters["fail_opens_unreachable"] == 6
    c.t += 1.0                                          # one probe, which fails again
    assert g.admit("a", 1, 1, 1).reason.startswith("ConnectionError")
    assert g.breaker.opens == 2 and g.counters["breaker_skips"] == 5
    assert set(CAUSE_COUNTERS) == {"unreachable", "timed out", "target not configured",
                                   "server error"}


def test_a_paused_server_times_out_once_per_cool_off(server):
    c = Clock()
    g = Gate("paused", url=server.url, timeout_s=0.2, clock=c)
    assert g.configure({"requests_per_s": 10})
    g._redis().execute_command("CLIENT", "PAUSE", 1500, "ALL")
    try:
        d = g.admit("a", 1, 1, 1)
        assert d.cause == "timed out" and g.counters["fail_opens_timed_out"] == 1
        assert g.admit("a", 1, 1, 1).reason.startswith("circuit breaker open: a gate call to "
                                                       "valkey timed out")
        assert g.counters["fail_opens_timed_out"] == 2 and g.counters["breaker_skips"] == 1
    finally:
        g.close()


def test_unconfigured_without_declared_config_fails_open_with_its_cause(server):
    g = Gate("never-configured", url=server.url, timeout_s=2.0)
    g._redis().delete(g.key)
    d = g.admit("a", 1, 1, 1)
    assert d.fail_open and d.cause == "target not configured"
    assert d.reason == "target not configured and no declared configuration to re-seed it"
    assert g.counters["fail_opens_unconfigured"] == 1 and g.breaker.state == "closed"


def test_declared_config_from_a_file_and_its_errors_name_the_path(tmp_path):
    f = tmp_path / "target.json"
    f.write_text(json.dumps(DECLARED))
    assert read_declared_config(f) == read_declared_config(DECLARED)
    f.write_text('{"caps": {"requests_per_s": 1}, "caps": {"requests_per_s": 2}}')
    with pytest.raises(ValueError, match=f'{f}: duplicate key "caps" \\(each field may appear once\\)$'):
        Gate("t", declared_config=str(f))


def test_class_policy_of_bpctl_export_is_read_and_seeded(server):
    # `bpctl export` always prints tuning.class_policy; a worker given that
    # file must seed it, strict included, not refuse it as unknown.
    config = {**DECLARED, "tuning": {**DECLARED["tuning"], "class_policy": "strict"}}
    g = Gate("strict-seed", url=server.url, timeout_s=2.0, declared_config=config)
    g._redis().delete(g.key)
    assert g._reseed(T0) is None and g.counters["reseeds"] == 1
    assert g._redis().hget(g.key, "class_policy") == "strict"
    fair = read_declared_config({"caps": {"requests_per_s": 1}})
    assert fair[fair.index("class_policy") + 1] == "fair"  # absent: the default


def test_seed_writes_the_declared_config_once(server):
    g = Gate("seeded", url=server.url, timeout_s=2.0, declared_config=DECLARED)
    racer = Gate("seeded", url=server.url, timeout_s=2.0, declared_config=DECLARED)
    g._redis().delete(g.key)
    assert g._reseed(T0) is None and g.counters["reseeds"] == 1
    assert racer._reseed(T0) is None and racer.counters["reseeds"] == 0  # configured: not written
    flat = g._eval("state", ["config", "none"])
    cfg = dict(zip(flat[::2], flat[1::2]))
    names = ["requests_per_s", "tokens_per_s", "burst_s", "classes", "omega:1", "omega:3",
             "tw:acme", "share_rule", "lend_fraction"]
    raw = dict(zip(names, g._redis().hmget(g.key, names)))
    assert (raw["requests_per_s"], raw["tokens_per_s"], raw["burst_s"]) == ("10", "1000", "1")
    assert (raw["classes"], raw["omega:1"], raw["omega:3"], raw["tw:acme"]) == ("3", "0.5", "0.2",
                                                                                  "2")
    assert raw["share_rule"] == "flat" and raw["lend_fraction"] is None  # the script's default
    assert float(cfg["lend_fraction"]) == 0.5 and float(cfg["slack_ms"]) == 50


def test_killed_server_replaced_by_an_empty_one_is_reseeded(caplog):
    """kill -9, an empty server on the same port: fail open (unreachable),
    then one re-seed from the declared configuration, and gating resumes
    with empty buckets."""
    s = Server()
    c = Clock()
    try:
        g = Gate("restart-seed", url=s.url, timeout_s=2.0, clock=c, declared_config=DECLARED)
        assert g.configure({"requests_per_s": 10, "tokens_per_s": 1000})
        before = g.admit("acme", 1, 1, 100, now_ms=T0)
        assert isinstance(before, Admit) and before.ticket.id == "1"
        s.kill()
        down = g.admit("acme", 1, 1, 100, now_ms=T0)
        assert down.fail_open and down.cause == "unreachable"
        assert g.admit("acme", 1, 1, 100, now_ms=T0).reason.startswith("circuit breaker open")
        assert g.release(before.ticket, 50) is False and g.counters["release_errors"] == 1
        s.start()                                       # same port, empty
        c.t += 1.0                                      # past the cool-off: one probe
        with caplog.at_level(logging.WARNING, logger="backpressure"):
            # 10 req/s, 1000 tok/s from an empty bucket at T0 + 5 s: the probe
            # may meet a pooled connection to the dead server first.
            for _ in range(3):
                back = g.admit("acme", 1, 1, 100, now_ms=T0 + 5000)
                if not getattr(back, "fail_open", False):
                    break
                c.t += 1.0
        assert isinstance(back, Defer) and back.binding.startswith("l1:")  # empty bucket at T0+5s
        assert g.counters["reseeds"] == 1
        ok = g.admit("acme", 1, 1, 100, now_ms=T0 + 6000)  # 1 s of refill: 10 req, 1000 tok
        assert isinstance(ok, Admit) and ok.ticket.id == str((T0 + 5000) * 1000 + 1)
        st = g.state()
        assert (float(st["l1_requests"]), float(st["l1_tokens"])) == (9, 900)
        assert g.counters["fail_opens_unreachable"] >= 2 and g.counters["fail_opens"] == \
            g.counters["fail_opens_unreachable"]
        assert g.release(before.ticket, 50) is False    # sent once already: refused here
        assert g.counters["duplicate_releases"] == 1
        # A second loss warns no more in this process.
        g._redis().delete(g.key)
        c.t += 2.0
        with caplog.at_level(logging.WARNING, logger="backpressure"):
            assert isinstance(g.admit("acme", 1, 1, 100, now_ms=T0 + 9000), Defer)  # empty again
        assert g.counters["reseeds"] == 2
        assert sum("re-seeded it from the declared configuration" in r.getMessage()
                   for r in caplog.records) == 1
    finally:
        s.stop()
