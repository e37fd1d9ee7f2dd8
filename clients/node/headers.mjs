// A provider answer's rate-limit headers as the gate's header rule takes them
// (docs/gate.md, "Adaptive caps"): per dimension the remaining budget and the
// time in ms until it is fully restored. OpenAI's x-ratelimit-remaining-* and
// x-ratelimit-reset-* (Go durations: "750ms", "1m2.5s"), else Anthropic's
// anthropic-ratelimit-{requests,tokens}-remaining and -reset (an RFC 3339
// instant, minus now; one in the past reads 0). A malformed value reads as
// absent (-1). The C++ parser (loadgen, bp::loadgen::ParseRateLimitHeaders)
// and the Python client answer the cases of tests/conformance/headers.json alike.

const DECIMAL = /^(?=[0-9.]*[0-9])[0-9]*\.?[0-9]*$/;
const GO_PART = /([0-9.]+)(h|ms|m|s|us|\u00b5s|ns)/gy;
const GO_UNIT_MS = { h: 3600e3, m: 60e3, s: 1e3, ms: 1, us: 1e-3, "\u00b5s": 1e-3, ns: 1e-6 };
const RFC3339 = /^(\d{4})-(\d{2})-(\d{2})[Tt](\d{2}):(\d{2}):(\d{2})(\.\d+)?([Zz]|[+-]\d{2}:\d{2})$/;

// A plain decimal number (digits, at most one dot, no sign), or null.
function decimal(value) {
  if (value === null || value === undefined) return null;
  const v = String(value).replace(/^[ \t]+|[ \t]+$/g, "");
  return v.length <= 32 && DECIMAL.test(v) ? Number(v) : null;
}

// A Go duration ("1h2m3.5s", "750ms") or plain seconds, in ms; null if absent or malformed.
export function goDurationMs(value) {
  const plain = decimal(value);
  if (plain !== null) return plain * 1000;
  if (!value) return null;
  let total = 0;
  let at = 0;
  GO_PART.lastIndex = 0;
  for (let m; (m = GO_PART.exec(value)) !== null; at = GO_PART.lastIndex) {
    if (decimal(m[1]) === null) return null;
    total += Number(m[1]) * GO_UNIT_MS[m[2]];
  }
  return at === value.length && at > 0 ? total : null;
}

// An RFC 3339 instant ('Z' or +-HH:MM offset required) in Unix ms, or null.
export function rfc3339Ms(value) {
  const m = value ? RFC3339.exec(String(value).replace(/^[ \t]+|[ \t]+$/g, "")) : null;
  if (!m) return null;
  const [y, mo, d, h, mi, s] = m.slice(1, 7).map(Number);
  if (mo < 1 || mo > 12 || d < 1 || d > 31 || h > 23 || mi > 59 || s > 60) return null;
  let offsetMin = 0;
  if (m[8] !== "Z" && m[8] !== "z") {
    const oh = Number(m[8].slice(1, 3));
    const om = Number(m[8].slice(4, 6));
    if (oh > 23 || om > 59) return null;
    offsetMin = (m[8][0] === "-" ? -1 : 1) * (oh * 60 + om);
  }
  let fractionMs = 0;
  let scale = 100;
  for (const c of (m[7] ?? ".").slice(1)) {
    fractionMs += Number(c) * scale;
    scale /= 10;
  }
  const secs = Date.UTC(y, mo - 1, d, h, mi, s) / 1000;
  return (secs - offsetMin * 60) * 1000 + fractionMs;
}

// The release's rate limits ({remainingRequests, resetRequestsMs,
// remainingTokens, resetTokensMs}, -1 = absent) of an answer's headers: a
// fetch Headers object or a plain object (names matched in lower case).
// nowMs: the wall clock in Unix ms when the request was sent, which an
// Anthropic reset instant is read against (the provider counted the
// remaining budget as the call arrived; read against the answer, R / T
// overstates the rate left by the call's service time). Default Date.now(),
// for a caller that did not keep the send time.
export function rateLimitsFromHeaders(headers, nowMs = Date.now()) {
  const h = new Map();
  const entries = typeof headers?.entries === "function" ? headers.entries() : Object.entries(headers ?? {});
  for (const [k, v] of entries) h.set(String(k).toLowerCase(), v);
  const out = {};
  for (const [d, D] of [["requests", "Requests"], ["tokens", "Tokens"]]) {
    let rem = decimal(h.get(`x-ratelimit-remaining-${d}`));
    let rst = goDurationMs(h.get(`x-ratelimit-reset-${d}`));
    if (rem === null) rem = decimal(h.get(`anthropic-ratelimit-${d}-remaining`));
    if (rst === null) {
      const at = rfc3339Ms(h.get(`anthropic-ratelimit-${d}-reset`));
      if (at !== null) rst = Math.max(0, at - nowMs);
    }
    out[`remaining${D}`] = rem === null ? -1 : Math.trunc(rem);
    out[`reset${D}Ms`] = rst === null ? -1 : rst;
  }
  return out;
}
