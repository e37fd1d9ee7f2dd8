"""A provider answer's rate-limit headers as the gate's header rule takes
them (docs/gate.md, "Adaptive caps"): per dimension the remaining budget and
the time in ms until it is fully restored. OpenAI's x-ratelimit-remaining-*
and x-ratelimit-reset-* (Go durations: "750ms", "1m2.5s"), else Anthropic's
anthropic-ratelimit-{requests,tokens}-remaining and -reset (an RFC 3339
instant, minus now; one in the past reads 0). A malformed value reads as
absent (-1). The C++ parser (loadgen, bp::loadgen::ParseRateLimitHeaders)
and the Node client answer the cases of tests/conformance/headers.json
alike."""

import calendar
import re
import time

from .gate import RateLimits

_DECIMAL = re.compile(r"(?=[0-9.]*[0-9])[0-9]*\.?[0-9]*")
_GO_PART = re.compile(r"([0-9.]+)(h|ms|m|s|us|\u00b5s|ns)")
_GO_UNIT_MS = {"h": 3600e3, "m": 60e3, "s": 1e3, "ms": 1.0, "us": 1e-3, "\u00b5s": 1e-3,
               "ns": 1e-6}
_RFC3339 = re.compile(r"(\d{4})-(\d{2})-(\d{2})[Tt](\d{2}):(\d{2}):(\d{2})(\.\d+)?"
                      r"([Zz]|[+-]\d{2}:\d{2})")


def _decimal(value):
    """A plain decimal number (digits, at most one dot, no sign), or None."""
    if value is None:
        return None
    v = value.strip(" \t")
    return float(v) if len(v) <= 32 and _DECIMAL.fullmatch(v) else None


def go_duration_ms(value):
    """A Go duration ("1h2m3.5s", "750ms") or plain seconds, in ms; None if
    absent or malformed."""
    plain = _decimal(value)
    if plain is not None:
        return plain * 1000
    if not value:
        return None
    total, at = 0.0, 0
    for m in _GO_PART.finditer(value):
        if m.start() != at or _decimal(m.group(1)) is None:
            return None
        total += float(m.group(1)) * _GO_UNIT_MS[m.group(2)]
        at = m.end()
    return total if at == len(value) and at > 0 else None


def rfc3339_ms(value):
    """An RFC 3339 instant ('Z' or +-HH:MM offset required) in Unix ms, or None."""
    m = _RFC3339.fullmatch(value.strip(" \t")) if value else None
    if not m:
        return None
    y, mo, d, h, mi, s = (int(g) for g in m.groups()[:6])
    if not (1 <= mo <= 12 and 1 <= d <= 31 and h <= 23 and mi <= 59 and s <= 60):
        return None
    off = m.group(8)
    offset_min = 0
    if off not in ("Z", "z"):
        oh, om = int(off[1:3]), int(off[4:6])
        if oh > 23 or om > 59:
            return None
        offset_min = (-1 if off[0] == "-" else 1) * (oh * 60 + om)
    fraction_ms = 0.0
    if m.group(7):
        scale = 100.0
        for c in m.group(7)[1:]:
            fraction_ms += int(c) * scale
            scale /= 10
    secs = calendar.timegm((y, mo, d, h, mi, s, 0, 0, 0))
    return (secs - offset_min * 60.0) * 1000 + fraction_ms


def rate_limits_from_headers(headers, now_ms=None):
    """RateLimits of an answer's headers (a mapping; names matched in lower
    case). now_ms: the wall clock in Unix ms when the request was sent, which
    an Anthropic reset instant is read against (the provider counted the
    remaining budget as the call arrived; read against the answer, R / T
    overstates the rate left by the call's service time). Default:
    time.time(), for a caller that did not keep the send time."""
    h = {str(k).lower(): v for k, v in dict(headers).items()}
    if now_ms is None:
        now_ms = time.time() * 1000
    out = {}
    for d in ("requests", "tokens"):
        rem = _decimal(h.get("x-ratelimit-remaining-" + d))
        rst = go_duration_ms(h.get("x-ratelimit-reset-" + d))
        if rem is None:
            rem = _decimal(h.get("anthropic-ratelimit-%s-remaining" % d))
        if rst is None:
            at = rfc3339_ms(h.get("anthropic-ratelimit-%s-reset" % d))
            if at is not None:
                rst = max(0.0, at - now_ms)
        out["remaining_" + d] = int(rem) if rem is not None else -1
        out["reset_%s_ms" % d] = rst if rst is not None else -1
    return RateLimits(**out)
