#!/usr/bin/env python3
"""A worker that puts the gate in front of its LLM calls (docs/clients.md).

For each call: admit; on Defer free the slot and come back after delta_ms
(a sleep here; in a workflow engine a durable timer); on Admit wait its
start_in_ms (0 unless --ahead-ms lets the gate admit a call ahead of the
bucket's refill; the slot is held meanwhile), call the OpenAI-compatible API
(mockapi) with plain HTTP, then release with the usage the answer reports;
on a 429 release with the upstream report, wait its retry-after and ask
again. Prints one JSON line of totals at the end.

With --seconds the worker keeps every slot busy until that much time has
passed (from --start-at, a unix ms shared with other processes, else now)
and then finishes the calls in flight: the mixed run (scripts/mixed-workers.sh)
uses it, with --summary FILE for the totals plus OK answers per unix second.
--declared-config FILE (`bpctl export`) lets the gate re-seed a target whose
store lost its state.

    BP_VALKEY_URL=redis://127.0.0.1:6379 BP_MOCKAPI_URL=http://127.0.0.1:8080 \\
      python3 clients/python/examples/worker.py --tenant acme --calls 50
"""

import argparse
import json
import os
import sys
import threading
import time
import urllib.error
import urllib.request
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from backpressure import (Admit, Defer, Gate, Reject, Upstream429,  # noqa: E402
                          rate_limits_from_headers, read_declared_config)


def call_api(base, model, prompt, max_tokens):
    """(status, body dict, headers) of one chat completion."""
    body = json.dumps({"model": model, "max_tokens": max_tokens,
                       "messages": [{"role": "user", "content": prompt}]}).encode()
    req = urllib.request.Request(base.rstrip("/") + "/v1/chat/completions", body,
                                 {"content-type": "application/json",
                                  "authorization": "Bearer sk-example"})
    try:
        with urllib.request.urlopen(req, timeout=30) as r:
            return r.status, json.load(r), r.headers
    except urllib.error.HTTPError as e:
        return e.code, json.loads(e.read() or b"{}"), e.headers


class Totals(dict):
    """Counts shared by the worker slots."""
    lock = threading.Lock()
    ok_per_s = {}  # unix second -> [OK answers, their tokens]

    def add(self, name, n=1):
        with self.lock:
            self[name] += n

    def tick(self, tokens):
        with self.lock:
            cell = self.ok_per_s.setdefault(int(time.time()), [0, 0])
            cell[0] += 1
            cell[1] += tokens


def one_call(gate, args, totals, sleep=time.sleep):
    """One call through the gate, retried until it is served or refused.
    sleep(seconds) does every wait (tests pass a recorder)."""
    prompt = "Summarize the quarterly report. " * args.prompt_words
    estimate = len(prompt) // 4 + args.max_tokens  # prompt + completion bound
    while True:
        d = gate.admit(args.tenant, args.priority, requests=1, tokens=estimate,
                       ahead_ms=args.ahead_ms)
        if isinstance(d, Defer):
            totals.add("defers")
            sleep(d.delta_ms / 1000)  # a durable timer in a workflow engine
            continue
        if isinstance(d, Reject):
            totals.add("rejects")
            return
        if d.start_in_ms > 0:
            # Admitted ahead: the bucket is debited for a refill still to
            # come; calling before it would send the provider a burst above
            # its cap.
            sleep(d.start_in_ms / 1000)
        sent_ms = time.time() * 1000  # Anthropic's reset instants are read against the send
        status, body, headers = call_api(args.mockapi, args.model, prompt, args.max_tokens)
        if not d.fail_open:
            totals.add("admits")
            totals.add("admitted_tokens", estimate)
        if status == 200:
            totals.add("ok")
            used = body.get("usage", {}).get("total_tokens", estimate)
            totals.add("tokens", used)
            totals.tick(used)
            gate.release(d.ticket, used, rate_limits=rate_limits_from_headers(headers, sent_ms))
            return
        if status == 429:
            totals.add("throttled")
            err = body.get("error", {}) if isinstance(body, dict) else {}
            bound = headers.get("x-mockapi-bound") or err.get("type") or ""
            retry_ms = float(headers.get("retry-after-ms") or 1000 * float(headers.get("retry-after") or 1))
            rl = rate_limits_from_headers(headers, sent_ms)
            gate.release(d.ticket, estimate, upstream=Upstream429(
                bound=bound if bound in ("requests", "tokens") else "",
                retry_after_ms=retry_ms,
                remaining_requests=rl.remaining_requests, reset_requests_ms=rl.reset_requests_ms,
                remaining_tokens=rl.remaining_tokens, reset_tokens_ms=rl.reset_tokens_ms))
            if headers.get("x-should-retry") == "false":
                return  # "Request too large": it can never pass
            sleep(retry_ms / 1000)
            continue
        totals.add("errors")
        gate.release(d.ticket, 0)
        return


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--tenant", default="python-worker")
    p.add_argument("--priority", type=int, default=1)
    p.add_argument("--calls", type=int, default=20)
    p.add_argument("--slots", type=int, default=4, help="concurrent calls (worker slots)")
    p.add_argument("--target", default=os.environ.get("BP_TARGET", "default"))
    p.add_argument("--valkey", default=os.environ.get("BP_VALKEY_URL", "redis://127.0.0.1:6379"))
    p.add_argument("--mockapi", default=os.environ.get("BP_MOCKAPI_URL", "http://127.0.0.1:8080"))
    p.add_argument("--model", default="gpt-4o-mini")
    p.add_argument("--prompt-words", type=int, default=20)
    p.add_argument("--max-tokens", type=int, default=64)
    p.add_argument("--timeout-ms", type=int, default=200, help="per gate command; then fail open")
    p.add_argument("--ahead-ms", type=int, default=0,
                   help="the longest wait before a call this worker keeps, holding its slot, "
                        "when the gate admits it ahead of the bucket's refill (0: never)")
    p.add_argument("--seconds", type=float, default=0,
                   help="run this long, whatever --calls says (0: run --calls calls)")
    p.add_argument("--start-at", type=int, default=0, help="unix ms to start at (0: now)")
    p.add_argument("--summary", help="also write the totals and OK answers per second here")
    p.add_argument("--declared-config", help="the target's `bpctl export` JSON, to re-seed it")
    args = p.parse_args()
    # A bad flag is refused by name, before any call: a worker that ran no
    # call and exited 0 would look like a finished one.
    for flag, low in (("calls", 1), ("slots", 1), ("priority", 1), ("prompt_words", 0),
                      ("max_tokens", 1), ("timeout_ms", 1), ("start_at", 0), ("ahead_ms", 0)):
        if getattr(args, flag) < low:
            p.error(f"--{flag.replace('_', '-')} must be >= {low}, got {getattr(args, flag)}")
    if not 0 <= args.seconds < float("inf"):
        p.error(f"--seconds must be a number >= 0, got {args.seconds}")
    if args.declared_config is not None:
        try:
            read_declared_config(args.declared_config)
        except (OSError, ValueError) as e:
            p.error(f"--declared-config {args.declared_config}: {e}")
    try:
        gate = Gate(args.target, url=args.valkey, timeout_s=args.timeout_ms / 1000,
                    declared_config=args.declared_config)
    except ValueError as e:
        p.error(str(e))
    totals = Totals(ok=0, throttled=0, defers=0, rejects=0, errors=0, tokens=0, admits=0,
                    admitted_tokens=0)
    if args.start_at:
        time.sleep(max(0.0, args.start_at / 1000 - time.time()))
    start, started_unix = time.monotonic(), time.time()

    def slot(n):
        while (time.monotonic() - start < args.seconds) if args.seconds else n > 0:
            one_call(gate, args, totals)
            n -= 1

    per_slot = [args.calls // args.slots + (i < args.calls % args.slots) for i in range(args.slots)]
    with ThreadPoolExecutor(args.slots) as pool:
        for f in [pool.submit(slot, n) for n in per_slot]:
            f.result()
    totals.update(tenant=args.tenant, client="python", seconds=round(time.monotonic() - start, 3),
                  fail_opens=gate.counters["fail_opens"])
    print(json.dumps({k: v for k, v in totals.items() if k not in ("admits", "admitted_tokens")}))
    if args.summary:
        with open(args.summary, "w") as f:
            json.dump(dict(totals, start_unix_s=started_unix, counters=gate.counters,
                           ok_per_s={str(k): v for k, v in sorted(totals.ok_per_s.items())}), f)


if __name__ == "__main__":
    main()
