"""Admit ahead (admit's ahead_ms) against a real server: the exact
start_in_ms, ARGV[10] sent only when ahead_ms > 0, invalid values refused
without a round trip, and the example worker waiting start_in_ms before it
calls the provider. 10 req/s and 1000 tok/s with a 1 s bucket throughout,
the numbers of tests/gate/gate_model_ahead_test.cpp."""

import argparse
import importlib.util
from pathlib import Path

from backpressure import INVALID_REQUEST, Admit, Defer, Gate, Reject

CAPS = {"requests_per_s": 10, "tokens_per_s": 1000}
T0 = 1_700_000_000_000
WORKER = Path(__file__).resolve().parents[1] / "examples/worker.py"


def fresh(server, name):
    g = Gate(name, url=server.url, timeout_s=2.0)
    g._redis().delete(g.key)
    assert g.configure(CAPS)
    return g


def record_script_args(gate):
    """Wraps gate._eval; returns the list of (script, args) it is called with."""
    sent, real = [], gate._eval

    def _eval(name, args):
        sent.append((name, list(args)))
        return real(name, args)
    gate._eval = _eval
    return sent


def test_a_call_admitted_ahead_carries_start_in_ms(server):
    g = fresh(server, "ahead-exact")
    sent = record_script_args(g)
    first = g.admit("a", 1, 1, 900, now_ms=T0)  # 1000 -> 100 tokens
    assert isinstance(first, Admit) and first.start_in_ms == 0
    # +100 ms: 100 -> 200 tokens; 250 needed is 50 ms of refill, within 100.
    d = g.admit("a", 1, 1, 250, now_ms=T0 + 100, ahead_ms=100)
    assert isinstance(d, Admit) and not d.fail_open
    assert (d.ticket.id, d.start_in_ms) == ("2", 50)
    assert float(g.state()["l1_tokens"]) == -50  # 200 - 250: the debt the refill pays
    assert [len(args) for _, args in sent[:2]] == [9, 10]  # ARGV[10] only when > 0
    assert sent[1][1][9] == 100
    # The next call needs (50 + 100) / 1000 s = 150 ms > 100: deferred.
    assert g.admit("a", 1, 1, 100, now_ms=T0 + 100, ahead_ms=100) == Defer(150, "l1:tokens")
    g.close()


def test_without_ahead_ms_the_same_call_is_deferred(server):
    g = fresh(server, "ahead-off")
    assert isinstance(g.admit("a", 1, 1, 900, now_ms=T0), Admit)
    assert g.admit("a", 1, 1, 250, now_ms=T0 + 100) == Defer(50, "l1:tokens")
    assert float(g.state()["l1_tokens"]) == 200  # nothing debited
    g.close()


def test_a_bad_ahead_ms_is_rejected_without_a_round_trip():
    g = Gate("never-connects", url="redis://127.0.0.1:1")  # nothing listens on port 1
    sent = record_script_args(g)
    bad = [-1, 2.5, 100.0, True, False, "100", None]
    for ahead in bad:
        assert g.admit("a", 1, 1, 1, ahead_ms=ahead) == Reject(INVALID_REQUEST), ahead
    assert INVALID_REQUEST.endswith("costs >= 0, ahead_ms >= 0")
    assert sent == [] and g.counters["rejects"] == len(bad) and g.counters["fail_opens"] == 0


def load_worker():
    spec = importlib.util.spec_from_file_location("example_worker", WORKER)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


class ScriptClock:
    """The example worker's gate on an explicit script clock: admit and
    release at now_ms, which the worker's waits move forward. Records each
    decision in events."""

    def __init__(self, gate, now_ms, events):
        self.gate, self.now_ms, self.events = gate, now_ms, events

    def admit(self, *a, **k):
        d = self.gate.admit(*a, now_ms=self.now_ms, **k)
        self.events.append(("admit", type(d).__name__, getattr(d, "start_in_ms", None)))
        return d

    def release(self, *a, **k):
        return self.gate.release(*a, now_ms=self.now_ms, **k)

    def sleep(self, seconds):
        self.events.append(("sleep", seconds))
        self.now_ms += round(seconds * 1000)


def run_example_call(server, monkeypatch, name, ahead_ms):
    """The events of one example-worker call of 250 tokens at +100 ms, after
    900 tokens at 0 (the provider answers at once with 250 tokens used)."""
    worker = load_worker()
    g = fresh(server, name)
    assert isinstance(g.admit("w", 1, 1, 900, now_ms=T0), Admit)  # 1000 -> 100 tokens
    events = []
    clock = ScriptClock(g, T0 + 100, events)

    def provider(base, model, prompt, max_tokens):
        events.append(("call", clock.now_ms - T0))
        return 200, {"usage": {"total_tokens": 250}}, {}
    monkeypatch.setattr(worker, "call_api", provider)
    # 25 x 32 characters: 200 prompt tokens, + 50 max_tokens = 250 admitted.
    args = argparse.Namespace(tenant="w", priority=1, prompt_words=25, max_tokens=50,
                              ahead_ms=ahead_ms, mockapi="http://unused", model="m")
    totals = worker.Totals(ok=0, throttled=0, defers=0, rejects=0, errors=0, tokens=0, admits=0,
                           admitted_tokens=0)
    worker.one_call(clock, args, totals, sleep=clock.sleep)
    assert (totals["ok"], totals["admitted_tokens"]) == (1, 250)
    g.close()
    return events


def test_the_example_worker_waits_start_in_ms_before_the_provider_call(server, monkeypatch):
    events = run_example_call(server, monkeypatch, "ahead-worker", ahead_ms=100)
    # Admitted at +100 ms to start in 50 ms: the wait, then the call.
    assert events == [("admit", "Admit", 50), ("sleep", 0.05), ("call", 150)]


def test_the_example_worker_without_ahead_ms_is_deferred_then_admitted(server, monkeypatch):
    events = run_example_call(server, monkeypatch, "ahead-worker-off", ahead_ms=0)
    assert events == [("admit", "Defer", None), ("sleep", 0.05), ("admit", "Admit", 0),
                      ("call", 150)]
