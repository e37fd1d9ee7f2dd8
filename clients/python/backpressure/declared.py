"""The target's declared configuration: the JSON of `bpctl export`,
`bpctl import` and `loadgen --gate-config` (its owner is
lib/gate/include/bp/gate_config_json.h), read into the field/value pairs
configure.lua's "seed" mode writes (docs/store-restart.md).

    {"version": 1,
     "caps": {"requests_per_s": 60, "tokens_per_s": 12000, "burst_s": 1},
     "priority_weights": [0.5, 0.3, 0.2],
     "tenant_weights": {"acme": 2},
     "tuning": {"slack_ms": 50, "lend_fraction": 0.5, "grace_ms": 200,
                "ticket_ttl_ms": 600000, "share_rule": "hier", "class_policy": "fair"}}

Parsing is strict as in C++: unknown fields, wrong types and values outside
the ranges tools accept are a ValueError naming the field, so an invalid
configuration is never written. A tuning field left out is sent empty, which
deletes it: the script's default applies (prelude.lua owns the defaults).
The pairs are those configure.lua's "declare" mode writes for the same JSON
(docs/protocol.md).
"""

import json
import math
import os

from .rules import valid_tenant

# (field, min, max, min_open, max_open): bp/gate_ranges.h's
# ranges (kMinGateRpm / 60 ... kMaxGateTpm / 60, kMaxGateCost*, burst).
_CAPS = {
    "requests_per_s": (1e-3 / 60, 1e9 / 60, False, False),
    "tokens_per_s": (0, 1e12 / 60, False, False),
    "burst_s": (1e-3, 3600, False, False),
    "max_cost_requests": (0, 1e9, False, False),
    "max_cost_tokens": (0, 1e12, False, False),
}
_TUNING = {
    "slack_ms": (0, math.inf, False, True),
    "lend_fraction": (0, 1, False, False),
    "grace_ms": (0, math.inf, False, True),
    "ticket_ttl_ms": (1, 2**53, False, False),
    "adapt_beta": (0, 1, True, True),
    "adapt_recover_ms": (0, 86_400_000, True, False),
    "adapt_window_ms": (0, 3_600_000, False, False),
    "adapt_min_429": (1, 1_000_000, False, False),
}
_INTEGER_TUNING = ("ticket_ttl_ms", "adapt_min_429")
_WEIGHT = (1e-6, 1e6, False, False)  # kMinGateWeight, kMaxGateWeight
_MAX_CLASSES = 100


def fmt(v):
    """The shortest decimal text that reads back as v ("60", "0.5")."""
    if isinstance(v, bool):
        return "1" if v else "0"
    if isinstance(v, int) or (isinstance(v, float) and v.is_integer() and abs(v) < 2**53):
        return str(int(v))
    return repr(float(v))


def _number(v, name, rng):
    if isinstance(v, bool) or not isinstance(v, (int, float)) or not math.isfinite(v):
        raise ValueError(f"{name}: must be a number")
    lo, hi, lo_open, hi_open = rng
    if v < lo or v > hi or (lo_open and v == lo) or (hi_open and v == hi):
        raise ValueError(f"{name}: must be in {'(' if lo_open else '['}{fmt(lo)}, "
                         f"{fmt(hi)}{')' if hi_open else ']'}, got {fmt(v)}")
    return v


def _only(obj, section, allowed):
    if not isinstance(obj, dict):
        raise ValueError(f"{section or 'configuration'}: must be an object")
    for k in obj:
        if k not in allowed:
            raise ValueError(f"{section + '.' if section else ''}{k}: unknown field")


def seed_pairs(config):
    """[field, value, ...] for configure.lua "seed" from the parsed JSON
    object `config`; ValueError naming the field when it is invalid."""
    _only(config, "", ("version", "caps", "priority_weights", "tenant_weights", "tuning"))
    if config.get("version", 1) != 1:
        raise ValueError(f"version: must be 1, got {config.get('version')!r}")
    caps = config.get("caps")
    if caps is None:
        raise ValueError("caps: required")
    _only(caps, "caps", _CAPS)
    if "requests_per_s" not in caps:
        raise ValueError("caps.requests_per_s: required")
    pairs = []
    for key, rng in _CAPS.items():
        default = {"tokens_per_s": 0, "burst_s": 1}.get(key, 0)
        v = _number(caps[key], f"caps.{key}", rng) if key in caps else default
        if key.startswith("max_cost") and 0 < v < 1:
            raise ValueError(f"caps.{key}: must be 0 (default) or >= 1, got {fmt(v)}")
        pairs += [key, fmt(v) if v or not key.startswith("max_cost") else ""]
    omega = config.get("priority_weights", [])
    if not isinstance(omega, list) or len(omega) > _MAX_CLASSES:
        raise ValueError(f"priority_weights: must be a list of at most {_MAX_CLASSES} numbers")
    for k, w in enumerate(omega):
        pairs += [f"omega:{k + 1}", fmt(_number(w, f"priority_weights[{k}]", _WEIGHT))]
    pairs += ["omega_sum", fmt(sum(omega)) if omega else "",
              "classes", str(len(omega)) if omega else ""]
    tuning = config.get("tuning", {})
    _only(tuning, "tuning", (*_TUNING, "adapt", "share_rule", "class_policy"))
    for key, rng in _TUNING.items():
        if key not in tuning:
            pairs += [key, ""]
            continue
        v = _number(tuning[key], f"tuning.{key}", rng)
        if key in _INTEGER_TUNING and v != int(v):
            raise ValueError(f"tuning.{key}: must be an integer, got {fmt(v)}")
        pairs += [key, fmt(v)]
    adapt = tuning.get("adapt", False)
    if not isinstance(adapt, bool):
        raise ValueError("tuning.adapt: must be true or false")
    share = tuning.get("share_rule", "hier")
    if share not in ("hier", "flat"):
        raise ValueError('tuning.share_rule: must be "hier" or "flat"')
    policy = tuning.get("class_policy", "fair")
    if policy not in ("fair", "strict"):
        raise ValueError('tuning.class_policy: must be "fair" or "strict"')
    pairs += ["adapt", "1" if adapt else "0", "share_rule", share, "class_policy", policy]
    weights = config.get("tenant_weights", {})
    _only(weights, "tenant_weights", weights)
    for tenant, w in weights.items():
        if not valid_tenant(tenant):
            raise ValueError(f"tenant_weights.{tenant}: tenant must match [A-Za-z0-9_.-]{{1,128}}")
        pairs += [f"tw:{tenant}", fmt(_number(w, f"tenant_weights.{tenant}", _WEIGHT))]
    return pairs


def read_declared_config(source):
    """Seed pairs from a parsed object (dict), a JSON text, or the path of a
    JSON file (`bpctl export > target.json`). ValueError on a bad content,
    OSError when the file cannot be read; messages start with the path."""
    if isinstance(source, dict):
        return seed_pairs(source)
    text, where = source, "declared configuration"
    if isinstance(source, (str, os.PathLike)) and not str(source).lstrip().startswith("{"):
        where = str(source)
        with open(source, encoding="utf-8") as f:
            text = f.read()

    def no_duplicates(items):
        out = {}
        for k, v in items:
            if k in out:
                raise ValueError(f"duplicate key {json.dumps(k)}")
            out[k] = v
        return out

    try:
        return seed_pairs(json.loads(text, object_pairs_hook=no_duplicates))
    except (ValueError, TypeError) as e:
        raise ValueError(f"{where}: {e}") from None
