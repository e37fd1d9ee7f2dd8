"""The Python client against a real server: validation before sending,
release once, fail-open with a counter across a server restart, NOSCRIPT
recovery, and a one-node cluster."""

import subprocess
import time

import pytest
import redis

from backpressure import (INVALID_REQUEST, PROTOCOL_VERSION, Admit, Defer, Gate, Reject,
                          load_scripts)
from backpressure.scripts import default_lua_dir, parse_parts
from conftest import Server, free_cluster_port, server_bin

CAPS = {"requests_per_s": 10, "tokens_per_s": 1000}


def fresh(server, name, **kw):
    g = Gate(name, url=server.url, timeout_s=2.0, **kw)
    g._redis().delete(g.key)
    assert g.configure(CAPS)
    return g


def test_invalid_input_is_rejected_without_a_round_trip():
    g = Gate("never-connects", url="redis://127.0.0.1:1")  # nothing listens on port 1
    for tenant, prio, req, tok in [("a b", 1, 1, 1), ("", 1, 1, 1), ("x" * 129, 1, 1, 1),
                                   ("é", 1, 1, 1), ("a", 0, 1, 1), ("a", 1.5, 1, 1),
                                   ("a", True, 1, 1), ("a", 1, -1, 1), ("a", 1, 1, -5),
                                   ("a", 1, 1, 2.5), (None, 1, 1, 1)]:
        assert g.admit(tenant, prio, req, tok) == Reject(INVALID_REQUEST), (tenant, prio, req, tok)
    assert g.counters["rejects"] == 11 and g.counters["fail_opens"] == 0
    assert isinstance(g.admit("A-z_0.9", 1, 1, 1), Admit)  # valid: reaches for the server, fails open
    assert g.counters["fail_opens"] == 1


def test_bad_constructor_arguments():
    with pytest.raises(ValueError, match="mode 'fast'"):
        Gate("t", mode="fast")
    with pytest.raises(ValueError, match="target 'a{b}'"):
        Gate("a{b}")


def test_scripts_are_the_cpp_build_text_and_check_the_version(tmp_path):
    s = load_scripts()
    assert s["admit"].text.startswith("-- admit.lua: prelude.lua, then admit.lua\n-- prelude.lua")
    assert f"local PROTOCOL_VERSION = {PROTOCOL_VERSION} " in s["release"].text
    for name in ("prelude", "admit", "release", "configure", "state", "reset_buckets"):
        text = (s["admit"].text if name == "prelude" else "")  # any content for the others
        (tmp_path / f"{name}.lua").write_text(text or "-- x\n")
    (tmp_path / "prelude.lua").write_text("local PROTOCOL_VERSION = 2\n")
    with pytest.raises(ValueError, match=r"prelude.lua: protocol version 2, this client implements 1"):
        load_scripts(tmp_path)
    (tmp_path / "prelude.lua").write_text("-- no version\n")
    with pytest.raises(ValueError, match="protocol version missing"):
        load_scripts(tmp_path)


def test_admit_is_the_prelude_then_its_parts_in_order():
    # parts.txt joins admit.lua and admit_decision.lua; the C++ and Node
    # tests assert the same text.
    lua = default_lua_dir()
    expected = "".join((lua / f).read_text() for f in ("prelude.lua", "admit.lua", "admit_decision.lua"))
    assert load_scripts()["admit"].text == "-- admit.lua: prelude.lua, then admit.lua\n" + expected
    assert parse_parts("# a b\n\nx.lua\n a.lua  b.lua c.lua \n") == {"a.lua": ["a.lua", "b.lua", "c.lua"]}


def test_release_is_sent_once(server):
    g = fresh(server, "release-once")
    d = g.admit("a", 1, 1, 100)
    assert isinstance(d, Admit) and d.ticket.id == "1"
    assert g.release(d.ticket, 40) is True          # 900 -> 960 tokens
    assert g.release(d.ticket, 0) is False          # not sent again
    assert g.counters["releases"] == 1 and g.counters["duplicate_releases"] == 1
    assert float(g.state()["l1_tokens"]) > 959      # refilled a little since, never refunded twice


def test_noscript_after_flush_is_recovered(server):
    g = fresh(server, "noscript")
    assert isinstance(g.admit("a", 1, 1, 1), Admit)
    g._redis().script_flush()
    assert isinstance(g.admit("a", 1, 1, 1), Admit)
    assert g.counters["admits"] == 2 and g.counters["fail_opens"] == 0


def test_restart_mid_run_fails_open_then_resumes():
    s = Server()
    try:
        g = Gate("restart", url=s.url, timeout_s=2.0)  # a loaded machine: no timeouts
        g.configure(CAPS)
        before = g.admit("a", 1, 1, 100)
        assert isinstance(before, Admit) and before.ticket is not None
        s.stop()
        down = g.admit("a", 1, 1, 100)
        assert down.fail_open and down.ticket is None and g.counters["fail_opens"] == 1
        assert g.release(before.ticket, 50) is False and g.counters["release_errors"] == 1
        s.start()  # same port, empty: scripts and configuration are gone
        for _ in range(50):  # until a pooled connection to the old process is replaced
            unconfigured = g.admit("a", 1, 1, 100)
            if "target not configured" in unconfigured.reason:
                break
            time.sleep(0.05)
        assert unconfigured.fail_open and "target not configured" in unconfigured.reason
        assert g.counters["fail_opens"] >= 2
        assert g.configure(CAPS)  # an operator (bpctl import) or the worker re-seeds
        back = g.admit("a", 1, 1, 100)
        assert isinstance(back, Admit) and back.ticket.id == "1" and not back.fail_open
        assert float(g.state()["l1_tokens"]) == 900
    finally:
        s.stop()


def test_defer_carries_delta_and_binding(server):
    g = fresh(server, "defer")
    t0 = 1_700_000_000_000
    assert isinstance(g.admit("a", 1, 1, 3000, now_ms=t0), Admit)  # 1000 -> -2000 tokens
    assert g.admit("b", 1, 1, 100, now_ms=t0) == Defer(2100, "l1:tokens")


def test_cluster_of_one_node_routes_by_the_hash_tag(tmp_path):
    port = free_cluster_port()
    proc = subprocess.Popen([server_bin(), "--port", str(port), "--bind", "127.0.0.1", "--save", "",
                             "--appendonly", "no", "--cluster-enabled", "yes",
                             "--cluster-config-file", str(tmp_path / "nodes.conf")],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        r = redis.Redis(host="127.0.0.1", port=port, decode_responses=True)  # not "localhost": ::1 is not bound
        for _ in range(100):
            try:
                r.ping()
                break
            except redis.exceptions.ConnectionError:
                time.sleep(0.05)
        r.execute_command("CLUSTER", "ADDSLOTSRANGE", 0, 16383)
        while r.execute_command("CLUSTER", "INFO").find("cluster_state:ok") < 0:
            time.sleep(0.05)
        g = Gate("clustered", url=f"redis+cluster://127.0.0.1:{port}", timeout_s=2.0)
        assert g.configure(CAPS)
        d = g.admit("a", 1, 1, 100)
        assert isinstance(d, Admit) and d.ticket.id == "1"
        assert g.release(d.ticket, 60)
        assert r.execute_command("CLUSTER", "KEYSLOT", g.key) == \
            r.execute_command("CLUSTER", "KEYSLOT", "clustered")
        g.close()
    finally:
        proc.terminate()
        proc.wait(10)
