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
the ranges tools accept are a ValueError naming the field, the range and the
value in the C++ reader's words, so an invalid configuration is never
written. A tuning field left out is sent empty, which
deletes it: the script's default applies (prelude.lua owns the defaults).
The pairs are those configure.lua's "declare" mode writes for the same JSON
(docs/protocol.md).
"""

import json
import math
import os

from .rules import valid_tenant

# field: ((min, max, min_open, max_open), note, zero_is_default): bp/gate_ranges.h's
# ranges as gate_config_json.cpp states them (kMinGateRpm / 60 ... kMaxGateTpm / 60,
# kMaxGateCost*, burst; a max cost is 0, the default, or at least 1).
_CAPS = {
    "requests_per_s": ((1e-3 / 60, 1e9 / 60, False, False), " (0.001 to 1e+09 rpm)", False),
    "tokens_per_s": ((0, 1e12 / 60, False, False), " (0 to 1e+12 tpm)", False),
    "burst_s": ((1e-3, 3600, False, False), "", False),
    "max_cost_requests": ((1, 1e9, False, False), "", True),
    "max_cost_tokens": ((1, 1e12, False, False), "", True),
}
_TUNING = {
    "slack_ms": (0, math.inf, False, False),
    "lend_fraction": (0, 1, False, False),
    "grace_ms": (0, math.inf, False, False),
    "ticket_ttl_ms": (1, 2**53, False, False),  # kMaxGateTicketTtlMs
    "adapt_beta": (0, 1, True, True),
    "adapt_recover_ms": (0, 86_400_000, True, False),
    "adapt_window_ms": (0, 3_600_000, False, False),
    "adapt_min_429": (1, 1_000_000, False, False),
}
_INTEGER_TUNING = ("ticket_ttl_ms", "adapt_min_429")
_WEIGHT = (1e-6, 1e6, False, False)  # kMinGateWeight, kMaxGateWeight
_MAX_CLASSES = 100
_TENANT_RULE = "must be a tenant name: 1-128 bytes of [A-Za-z0-9_.-]"


def fmt(v):
    """The shortest decimal text that reads back as v ("60", "0.5"): the
    values the seed writes, as configure.lua's "declare" mode writes them."""
    if isinstance(v, bool):
        return "1" if v else "0"
    if isinstance(v, int) or (isinstance(v, float) and v.is_integer() and abs(v) < 2**53):
        return str(int(v))
    return repr(float(v))


def format_number(v):
    """bp::FormatNumber (lib/base/include/bp/decimal.h), for messages: printf's
    %g at the fewest significant digits, 6 to 17, that read back as v
    ("60", "1e-06", "8.64e+07", "1.6666666666666667e-05")."""
    for digits in range(6, 18):
        text = "%.*g" % (digits, v)
        if float(text) == v:
            return text
    return "%.17g" % v


def range_text(rng):
    """bp::RangeText: "[0.001, 3600]", "(0, 1)"; with no upper bound ">= 0"."""
    lo, hi, lo_open, hi_open = rng
    if math.isinf(hi):
        return f"{'>' if lo_open else '>='} {format_number(lo)}"
    return (f"{'(' if lo_open else '['}{format_number(lo)}, "
            f"{format_number(hi)}{')' if hi_open else ']'}")


def _json(v):
    """A value as the C++ reader quotes it (nlohmann::json's dump())."""
    return json.dumps(v, ensure_ascii=False, separators=(",", ":"))


def _is_number(v):
    return isinstance(v, (int, float)) and not isinstance(v, bool)


def _in_range(v, rng):
    lo, hi, lo_open, hi_open = rng
    return (math.isfinite(v) and lo <= v <= hi and not (lo_open and v == lo)
            and not (hi_open and v == hi))


def _number(v, name, rng, note="", zero_is_default=False):
    """v when it is a number inside rng; else ValueError in the C++ reader's
    words (gate_config_json.cpp): "NAME: must be a number in [1e-06, 1e+06],
    got -1"."""
    if _is_number(v) and ((zero_is_default and v == 0) or _in_range(v, rng)):
        return v
    if zero_is_default:
        rule = f"must be 0 (the default) or a number in {range_text(rng)}"
    elif math.isinf(rng[1]):
        rule = f"must be a finite number {range_text(rng)}"
    else:
        rule = f"must be a number in {range_text(rng)}"
    raise ValueError(f"{name}: {rule}{note}, got {_json(v)}")


def _integer(v, name, rng):
    lo, hi = rng[0], rng[1]
    if isinstance(v, int) and not isinstance(v, bool) and lo <= v <= hi:
        return v
    raise ValueError(f"{name}: must be an integer in [{lo}, {hi}], got {_json(v)}")


def _only(obj, section, allowed):
    if not isinstance(obj, dict):
        raise ValueError(f"{section}: must be an object" if section
                         else "document: must be a JSON object")
    for k in obj:
        if k not in allowed:
            raise ValueError(f"{section + '.' if section else ''}{k}: unknown field")


def _one_of(v, name, names):
    if v not in names or not isinstance(v, str):
        raise ValueError(f"{name}: must be {' | '.join(names)}, got {_json(v)}")
    return v


def seed_pairs(config):
    """[field, value, ...] for configure.lua "seed" from the parsed JSON
    object `config`; ValueError naming the field when it is invalid, with
    the C++ reader's message (bp::GateConfigFromJson; the cases of
    tests/conformance/declared.json). One difference: "version" may be left
    out here (1), for configurations written as a dict in code."""
    _only(config, "", ("version", "caps", "priority_weights", "tenant_weights", "tuning"))
    if config.get("version", 1) != 1 or isinstance(config.get("version"), bool):
        raise ValueError(f"version: must be 1, got {_json(config['version'])}")
    if "caps" not in config:
        raise ValueError("caps: missing (required; null when not configured)")
    caps = config["caps"]
    if caps is not None:
        _only(caps, "caps", _CAPS)
        if "requests_per_s" not in caps:
            raise ValueError("caps.requests_per_s: missing (required)")
    pairs = []
    for key, (rng, note, zero_is_default) in _CAPS.items():
        default = {"tokens_per_s": 0, "burst_s": 1}.get(key, 0)
        v = (_number(caps[key], f"caps.{key}", rng, note, zero_is_default)
             if caps is not None and key in caps else default)
        pairs += [key, fmt(v) if v or not key.startswith("max_cost") else ""]
    omega = config.get("priority_weights", [])
    if not isinstance(omega, list):
        raise ValueError(f"priority_weights: must be an array of numbers, got {_json(omega)}")
    for k, w in enumerate(omega):
        pairs += [f"omega:{k + 1}", fmt(_number(w, f"priority_weights[{k}]", _WEIGHT))]
    pairs += ["omega_sum", fmt(sum(omega)) if omega else "",
              "classes", str(len(omega)) if omega else ""]
    weights = config.get("tenant_weights", {})
    if not isinstance(weights, dict):
        raise ValueError(f"tenant_weights: must be an object of numbers, got {_json(weights)}")
    weight_pairs = []
    for tenant, w in weights.items():
        if not valid_tenant(tenant):
            raise ValueError(f"tenant_weights.{tenant}: {_TENANT_RULE}")
        weight_pairs += [f"tw:{tenant}", fmt(_number(w, f"tenant_weights.{tenant}", _WEIGHT))]
    tuning = config.get("tuning", {})
    _only(tuning, "tuning", (*_TUNING, "adapt", "share_rule", "class_policy"))
    for key, rng in _TUNING.items():
        if key not in tuning:
            pairs += [key, ""]
            continue
        name = f"tuning.{key}"
        v = (_integer(tuning[key], name, rng) if key in _INTEGER_TUNING
             else _number(tuning[key], name, rng))
        pairs += [key, fmt(v)]
    adapt = tuning.get("adapt", False)
    if not isinstance(adapt, bool):
        raise ValueError(f"tuning.adapt: must be true or false, got {_json(adapt)}")
    share = _one_of(tuning.get("share_rule", "hier"), "tuning.share_rule", ("hier", "flat"))
    policy = _one_of(tuning.get("class_policy", "fair"), "tuning.class_policy",
                     ("fair", "strict"))
    pairs += ["adapt", "1" if adapt else "0", "share_rule", share, "class_policy", policy]
    if len(omega) > _MAX_CLASSES:
        raise ValueError(f"priority_weights: at most {_MAX_CLASSES} classes, got {len(omega)}")
    if caps is None:
        raise ValueError("caps: required (the gate needs caps)")
    return pairs + weight_pairs


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
                raise ValueError(f"duplicate key {json.dumps(k)} (each field may appear once)")
            out[k] = v
        return out

    try:
        return seed_pairs(json.loads(text, object_pairs_hook=no_duplicates))
    except (ValueError, TypeError) as e:
        raise ValueError(f"{where}: {e}") from None
