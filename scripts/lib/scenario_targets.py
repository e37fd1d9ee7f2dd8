#!/usr/bin/env python3
"""Prints the scenario target figures of a scenarios run as a Markdown table.

usage: scenario_targets.py OUT CONFIGS

Reads OUT/<scenario>/<config>/r0/summary.json (written by loadgen for workloads
with events, section "scenario") for every scenario folder and every config of
the comma list CONFIGS. One row per (event, figure); the last column says
whether the last configuration (bp) meets the target. Figures by event type:
  upstream_limits, outside_traffic: 429 share and achievement-Jain over the
      event's "after" window (event + settle_s, window_s long), against the
      capacity then in force;
  join, leave, tenant_weight, class_omega: time to fair share (every tracked
      tenant within 10 % of its share over 1 s);
  state_outage: workflows completed / started, gate fail-opens, and the 429
      share before the outage, in the first 2 s after the restore and in the
      "after" window; "back to its level" = after <= before + 1 point.
"""
import json
import os
import sys


def pct(v):
    return "-" if v is None else f"{100 * v:.1f} %"


def num(v, d=3):
    return "-" if v is None else f"{v:.{d}f}"


def secs(v):
    return "-" if v is None else ("never" if v < 0 else f"{v:.2f} s")


def load(out, scenario, config):
    path = os.path.join(out, scenario, config, "r0", "summary.json")
    try:
        with open(path) as f:
            return json.load(f).get("scenario")
    except (OSError, ValueError):
        return None


def rows_for(event, sc):
    """(figure, target text, value, formatted, meets) per figure of one event."""
    t, a = event["type"], event["after"]
    if t in ("upstream_limits", "outside_traffic"):
        limit = 0.02 if t == "upstream_limits" else 0.03
        if "stops" in event["text"]:
            limit = None
        out = [("429 share after", f"<= {pct(limit)}" if limit else "-",
                pct(a["share_429"]), limit is not None and a["share_429"] <= limit),
               ("Jain after (capacity %.0f/s)" % a["capacity_requests_per_s"],
                ">= 0.95" if limit else "-", num(a["achievement_jain"]),
                limit is not None and a["achievement_jain"] >= 0.95)]
        return out
    if t in ("join", "leave", "tenant_weight", "class_omega"):
        v = event.get("time_to_share_s", -1)
        return [("time to fair share", "<= 2 s", secs(v), 0 <= v <= 2)]
    if t == "state_outage":
        before, first, after = event["before"], event["first_2s_after_restore"], a
        done = sc["workflows_completed"] == sc["workflows_started"]
        return [("workflows completed", "all", f'{sc["workflows_completed"]}/{sc["workflows_started"]}', done),
                ("gate fail-opens (summary)", "counted", str(sc["gate_fail_opens"]), True),
                ("429 before / first 2 s / after", "after <= before + 1 pt",
                 f'{pct(before["share_429"])} / {pct(first["share_429"])} / {pct(after["share_429"])}',
                 after["share_429"] <= before["share_429"] + 0.01)]
    return []


def main():
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    out, configs = sys.argv[1], [c for c in sys.argv[2].split(",") if c]
    scenarios = sorted(d for d in os.listdir(out) if os.path.isdir(os.path.join(out, d)))
    print("| scenario | event | figure | target | " + " | ".join(configs) + f" | {configs[-1]} meets |")
    print("|---" * (5 + len(configs)) + "|")
    for s in scenarios:
        data = {c: load(out, s, c) for c in configs}
        ref = next((d for d in data.values() if d), None)
        if not ref:
            continue
        for i, ev in enumerate(ref["events"]):
            per = {}
            for c in configs:
                d = data[c]
                per[c] = rows_for(d["events"][i], d) if d and i < len(d["events"]) else []
            for j, (fig, target, _, _) in enumerate(rows_for(ev, ref)):
                cells = [per[c][j][2] if j < len(per[c]) else "-" for c in configs]
                last = per[configs[-1]]
                meets = ("yes" if last[j][3] else "**no**") if j < len(last) and target != "-" else ""
                print(f"| {s} | {ev['text']} | {fig} | {target} | " + " | ".join(cells) + f" | {meets} |")


if __name__ == "__main__":
    main()
