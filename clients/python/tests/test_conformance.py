"""Runs every case of tests/conformance/cases.json (docs/protocol.md,
"Conformance") through this client against a real server."""

import json
import math
from pathlib import Path

import pytest

from backpressure import Admit, Defer, Gate, RateLimits, Reject, Upstream429

CASES = json.loads((Path(__file__).resolve().parents[3] / "tests/conformance/cases.json").read_text())


def check_state(gate, want, where):
    got = gate.state()
    for q in got["queues"]:
        fields = dict(zip(q[::2], q[1::2]))
        for f in ("tag", "backlogged", "admits", "defers", "lent"):
            got[f"queue:{fields['priority']}:{fields['tenant']}:{f}"] = fields[f]
    for name, value in want.items():
        assert name in got, f"{where}: state has no {name}"
        g = float(got[name])
        assert math.isclose(g, value, rel_tol=1e-9, abs_tol=1e-9), f"{where}: {name} {g} != {value}"


def run_case(server, case):
    gate = Gate("conformance-py-" + case["name"], url=server.url, mode=case.get("mode", "reconcile"),
                timeout_s=2.0)
    gate._redis().delete(gate.key)
    assert gate.configure(case["config"])
    tickets = {}
    t0 = CASES["t0_ms"]
    for i, step in enumerate(case["steps"]):
        where = f"{case['name']} step {i + 1}"
        now = t0 + step["at_ms"]
        want = step["expect"]
        if "admit" in step:
            a = step["admit"]
            d = gate.admit(a["tenant"], a.get("priority", 1), a.get("requests", 1),
                           a.get("tokens", 0), a.get("max_tokens", 0), now_ms=now,
                           ahead_ms=a.get("ahead_ms", 0))
            if want["decision"] == "ADMIT":
                assert isinstance(d, Admit) and not d.fail_open, f"{where}: {d}"
                assert d.ticket.id == want["ticket"], f"{where}: {d}"
                assert d.start_in_ms == want.get("start_in_ms", 0), f"{where}: {d}"
                tickets[d.ticket.id] = d.ticket
            elif want["decision"] == "DEFER":
                assert d == Defer(want["delta_ms"], want["binding"]), f"{where}: {d}"
            else:
                assert d == Reject(want["reason"]), f"{where}: {d}"
        else:
            r = step["release"]
            up = Upstream429(**r["upstream"]) if "upstream" in r else None
            rl = RateLimits(**r["rate_limits"]) if "rate_limits" in r else None
            applied = gate.release(tickets[r["ticket"]], r["tokens"], r.get("requests", 1),
                                   upstream=up, now_ms=now, rate_limits=rl)
            assert applied == want["applied"], f"{where}: applied {applied}"
        check_state(gate, step.get("state", {}), where)
    gate.close()


@pytest.mark.parametrize("case", CASES["cases"], ids=[c["name"] for c in CASES["cases"]])
def test_case(server, case):
    run_case(server, case)


def test_file_names_this_protocol():
    from backpressure import PROTOCOL_VERSION
    assert CASES["protocol_version"] == PROTOCOL_VERSION
