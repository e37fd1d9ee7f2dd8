#!/usr/bin/env python3
"""The mixed run's report (scripts/mixed-workers.sh, docs/mixed-workers.md):
loadgen's tenants and the external workers' tenants in one table.

Inputs: loadgen's merged report folder (attempts.csv: every upstream answer
with its time from the run's start; summary.json: tokens per OK call per
tenant; the records file: the start in unix us) and one JSON summary per
external worker (clients/*/examples --summary: totals and OK answers per unix
second). Everything is measured over one window of whole unix seconds, from
WARM_S after the shared start to COOL_S before its end, where every tenant is
backlogged; 429s are counted over the whole run.

The fair share is loadgen's: weighted DRF by progressive filling,
`WeightedDrfShares` in loadgen/src/metrics/metrics_fairness.cpp (declared in
loadgen/include/bp/loadgen/fairness.h), with each queue built as
`ShareQueue` (loadgen/src/metrics/metrics_internal.h) and
`ComputeRunMetrics` (loadgen/src/metrics/metrics.cpp) build it: cost {1,
tokens per OK call}, weight w_t in group k with omega_k (hier) or w_t * omega_k
(flat), no demand cap (every tenant is backlogged). `drf_shares` below is a
line-by-line port; tests/clients/mixed_report_test.py checks it on the C++
tests' cases (tests/loadgen/metrics_fairness_test.cpp).
"""

import argparse
import collections
import csv
import glob
import json
import math
import os
import sys

WARM_S = 3  # seconds after the start left out: interpreters and queues warming up
COOL_S = 2  # seconds before the end left out: slots finishing their last call


def drf_shares(caps, queues):
    """Rates (req/s) of WeightedDrfShares. caps: [C_d]; queues: dicts with
    weight, cost [per d], demand_cap (default inf), group (default -1: flat),
    group_weight (default 1)."""
    n, dims = len(queues), len(caps)
    rate = [0.0] * n
    sigma, active = [0.0] * n, [False] * n
    for q, qu in enumerate(queues):
        s = 0.0
        ok = len(qu["cost"]) == dims and qu.get("weight", 1.0) > 0
        for d in range(dims):
            if not (caps[d] > 0) or qu["cost"][d] < 0:
                ok = False
                break
            s = max(s, qu["cost"][d] / caps[d])
        sigma[q] = s if ok else 0.0
        if sigma[q] > 0 and qu.get("demand_cap", math.inf) > 0 and \
                (qu.get("group", -1) < 0 or qu.get("group_weight", 1.0) > 0):
            active[q] = True
    used, w = [0.0] * dims, [0.0] * n
    while any(active):
        group_sum = collections.defaultdict(float)
        for q in range(n):
            if active[q] and queues[q].get("group", -1) >= 0:
                group_sum[queues[q]["group"]] += queues[q].get("weight", 1.0)
        for q in range(n):
            if active[q]:
                w[q] = queues[q].get("weight", 1.0)
                if queues[q].get("group", -1) >= 0:
                    w[q] = queues[q].get("group_weight", 1.0) * w[q] / group_sum[queues[q]["group"]]
        step, bind = math.inf, -1
        for d in range(dims):
            demand = sum(w[q] * queues[q]["cost"][d] / sigma[q] for q in range(n) if active[q])
            if demand <= 0:
                continue
            x_d = max(0.0, caps[d] - used[d]) / demand
            if x_d < step:
                step, bind = x_d, d
        cap_step = min((queues[q].get("demand_cap", math.inf) - rate[q]) * sigma[q] / w[q]
                       for q in range(n) if active[q])
        if math.isinf(step) and math.isinf(cap_step):
            break
        caps_first = cap_step <= step
        x = cap_step if caps_first else step
        for q in range(n):
            if active[q]:
                add = w[q] * x / sigma[q]
                rate[q] += add
                for d in range(dims):
                    used[d] += add * queues[q]["cost"][d]
        if caps_first:
            for q in range(n):
                cap = queues[q].get("demand_cap", math.inf)
                if active[q] and (cap - rate[q]) * sigma[q] / w[q] <= 1e-9 * cap_step + 1e-15:
                    rate[q] = cap
                    active[q] = False
            continue
        for q in range(n):
            if active[q] and queues[q]["cost"][bind] > 1e-12 * sigma[q] * caps[bind]:
                active[q] = False
    return rate


def jain(xs):
    """Jain's fairness index (sum x)^2 / (n sum x^2); 1 for an empty list."""
    sq = sum(x * x for x in xs)
    return (sum(xs) ** 2) / (len(xs) * sq) if xs and sq > 0 else 1.0


def loadgen_tenants(folder):
    """{tenant: dict} from loadgen's merged report: attempts, 429s, OK answers
    per unix second and tokens per OK call."""
    run = glob.glob(os.path.join(folder, "*", "bp", "r0"))
    if len(run) != 1:
        sys.exit(f"mixed_report: expected one */bp/r0 run in {folder}, found {len(run)}")
    summary = json.load(open(os.path.join(run[0], "summary.json")))
    records = glob.glob(os.path.join(os.path.dirname(folder.rstrip("/")), "shards", "**",
                                     "*.records.json"), recursive=True)
    rec = json.load(open(records[0])) if records else {}
    start_s = rec["start_unix_us"] / 1e6 if rec else None
    out = {}
    for t in summary["tenants"]:
        out[t["id"]] = dict(client="loadgen", priority=t["priority"], weight=t["weight"],
                            tokens_per_call=t["tokens_per_call"], attempts=0, throttled=0,
                            ok_per_s=collections.Counter(), fail_opens=None)
    for row in csv.DictReader(open(os.path.join(run[0], "attempts.csv"))):
        t = out[row["tenant"]]
        t["attempts"] += 1
        if row["status"] == "429":
            t["throttled"] += 1
        elif row["status"] == "200":
            t["ok_per_s"][math.floor(start_s + float(row["done_ms"]) / 1000)] += 1
    gate = (rec.get("gate_fail_opens", summary.get("gate_fail_opens", 0)), rec.get("gate_reseeds", 0))
    return out, start_s, gate


def external_tenant(path):
    s = json.load(open(path))
    ok = s["ok"]
    c = s.get("counters", {})
    return s["tenant"], dict(client=s["client"], priority=1, weight=1.0,
                             reseeds=c.get("reseeds", 0),
                             breaker_skips=c.get("breaker_skips", c.get("breakerSkips", 0)),
                             tokens_per_call=s["tokens"] / ok if ok else 0,
                             attempts=s["ok"] + s["throttled"] + s["errors"],
                             throttled=s["throttled"], fail_opens=s["fail_opens"],
                             ok_per_s=collections.Counter({int(k): v[0]
                                                           for k, v in s["ok_per_s"].items()}))


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--declared", required=True, help="the gate's declared configuration JSON")
    p.add_argument("--loadgen", required=True, help="loadgen merge's --out folder")
    p.add_argument("--start-ms", type=int, required=True, help="the shared start, unix ms")
    p.add_argument("--seconds", type=int, required=True)
    p.add_argument("summaries", nargs="*", help="the external workers' --summary files")
    a = p.parse_args()
    cfg = json.load(open(a.declared))
    caps = [cfg["caps"]["requests_per_s"], cfg["caps"].get("tokens_per_s", 0)]
    omega = cfg.get("priority_weights") or [1.0]
    flat = cfg.get("tuning", {}).get("share_rule") == "flat"
    tenants, lg_start_s, lg_gate = loadgen_tenants(a.loadgen)
    for path in a.summaries:
        name, t = external_tenant(path)
        tenants[name] = t
    start = math.ceil(lg_start_s if lg_start_s else a.start_ms / 1000)
    lo, hi = start + WARM_S, math.floor(a.start_ms / 1000 + a.seconds) - COOL_S
    span = hi - lo
    if span <= 0:
        sys.exit("mixed_report: the run is too short for a window")
    names = list(tenants)
    queues = []
    for n in names:
        t = tenants[n]
        t["w"] = cfg.get("tenant_weights", {}).get(n, t["weight"])
        t["ok_window"] = sum(v for s, v in t["ok_per_s"].items() if lo <= s < hi)
        t["ok_rps"] = t["ok_window"] / span
        k = t["priority"]
        q = {"cost": [1.0, t["tokens_per_call"]]}
        q.update({"weight": t["w"] * omega[k - 1]} if flat else
                 {"weight": t["w"], "group": k, "group_weight": omega[k - 1]})
        queues.append(q)
    ideal = drf_shares(caps, queues)
    for n, r in zip(names, ideal):
        tenants[n]["ideal"] = r
        tenants[n]["achievement"] = tenants[n]["ok_rps"] / r if r > 0 else 0
    # Served = OK answers over the window (mockapi counts OK calls only,
    # count_rejected false). Per-second bins by completion time are not the
    # provider's windows (it counts at arrival), so only the mean is a target.
    req_rate = sum(t["ok_rps"] for t in tenants.values())
    tok_rate = sum(t["ok_rps"] * t["tokens_per_call"] for t in tenants.values())
    attempts = sum(t["attempts"] for t in tenants.values())
    throttled = sum(t["throttled"] for t in tenants.values())
    ach = [tenants[n]["achievement"] for n in names]
    by_client = collections.defaultdict(list)
    for n in names:
        by_client[tenants[n]["client"]].append(tenants[n]["achievement"])

    print(f"Window: {span} s (unix {lo} to {hi}, the run's seconds {lo - start} to {hi - start}); "
          f"caps {caps[0]:g} req/s, {caps[1]:g} tok/s; share rule {'flat' if flat else 'hier'}.\n")
    print("| tenant | client | weight | tokens / OK call | OK req/s | ideal req/s | achievement "
          "| upstream answers | 429s | fail-opens |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    for n in names:
        t = tenants[n]
        fo = "-" if t["fail_opens"] is None else t["fail_opens"]
        print(f"| {n} | {t['client']} | {t['w']:g} | {t['tokens_per_call']:.0f} | "
              f"{t['ok_rps']:.2f} | {t['ideal']:.2f} | {t['achievement']:.3f} | {t['attempts']} | "
              f"{t['throttled']} | {fo} |")
    print()
    rows = [
        ("served requests, mean over the window", f"{req_rate:.1f} req/s", f"<= {caps[0]:g}",
         req_rate <= caps[0] * 1.001),
        ("served tokens, mean over the window", f"{tok_rate:.0f} tok/s", f"<= {caps[1]:g}",
         tok_rate <= caps[1] * 1.001),
        ("429 share (whole run)", f"{100 * throttled / max(attempts, 1):.2f} % "
         f"({throttled} of {attempts})", "<= 2 %", throttled <= 0.02 * attempts),
        ("achievement-Jain, all tenants", f"{jain(ach):.3f}", ">= 0.95", jain(ach) >= 0.95),
    ]
    for c, xs in sorted(by_client.items()):
        rows.append((f"lowest achievement, {c} ({len(xs)} tenants)", f"{min(xs):.3f}",
                     "> 0.5 (not starved)", min(xs) > 0.5))
    print("| measure | value | target | met |\n|---|---|---|---|")
    for what, v, target, met in rows:
        print(f"| {what} | {v} | {target} | {'yes' if met else 'NO'} |")
    print("\nGate faults by process (fail-opens / breaker skips / re-seeds written): loadgen "
          f"{lg_gate[0]} / - / {lg_gate[1]}" + "".join(
              f"; {n} {t['fail_opens']} / {t['breaker_skips']} / {t['reseeds']}"
              for n, t in tenants.items() if t["client"] != "loadgen") + ".")
    return 0 if all(r[3] for r in rows) else 3


if __name__ == "__main__":
    sys.exit(main())
