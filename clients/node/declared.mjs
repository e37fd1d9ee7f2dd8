// The target's declared configuration: the JSON of `bpctl export`, `bpctl
// import` and `loadgen --gate-config` (its owner is
// lib/gate/include/bp/gate_config_json.h), read into the field/value pairs
// configure.lua's "seed" mode writes (docs/store-restart.md). Parsing is
// strict as in C++: unknown fields, wrong types and values outside the
// ranges tools accept throw an Error naming the field, the range and the
// value in the C++ reader's words, so an invalid configuration is never
// written. A tuning field left out is sent empty,
// which deletes it: the script's default applies (prelude.lua owns the
// defaults). The pairs are those configure.lua's "declare" mode writes
// for the same JSON (docs/protocol.md);
// clients/python/backpressure/declared.py is the same reader in Python. One
// difference: a key repeated within one object is not refused here
// (JSON.parse keeps the last), where C++ and Python refuse it.
import { readFileSync } from "node:fs";
import { validTenant } from "./rules.mjs";

// [min, max, minOpen, maxOpen]: bp/gate_ranges.h's ranges as
// gate_config_json.cpp states them; a max cost is 0 (the default) or at least 1.
const CAPS = {
  requests_per_s: [[1e-3 / 60, 1e9 / 60], " (0.001 to 1e+09 rpm)"],
  tokens_per_s: [[0, 1e12 / 60], " (0 to 1e+12 tpm)"],
  burst_s: [[1e-3, 3600], ""],
  max_cost_requests: [[1, 1e9], "", true],
  max_cost_tokens: [[1, 1e12], "", true],
};
const TUNING = {
  slack_ms: [0, Infinity], lend_fraction: [0, 1], grace_ms: [0, Infinity],
  ticket_ttl_ms: [1, 2 ** 53], adapt_beta: [0, 1, true, true], adapt_recover_ms: [0, 86400000, true],
  adapt_window_ms: [0, 3600000], adapt_min_429: [1, 1000000],
};
const INTEGER_TUNING = ["ticket_ttl_ms", "adapt_min_429"];
const WEIGHT = [1e-6, 1e6];  // kMinGateWeight, kMaxGateWeight
const MAX_CLASSES = 100;
const TENANT_RULE = "must be a tenant name: 1-128 bytes of [A-Za-z0-9_.-]";

// The shortest decimal text that reads back as v ("60", "0.5", "1e+300"):
// the values the seed writes.
export const fmt = (v) => String(v);

// printf's "%.<digits>g".
function printfG(v, digits) {
  if (v === 0 || !Number.isFinite(v)) return String(v);
  const [mantissa, exp] = v.toExponential(digits - 1).split("e").map((x, i) => (i ? Number(x) : x));
  const trim = (t) => (t.includes(".") ? t.replace(/\.?0+$/, "") : t);
  if (exp < -4 || exp >= digits) {
    return `${trim(mantissa)}e${exp < 0 ? "-" : "+"}${String(Math.abs(exp)).padStart(2, "0")}`;
  }
  return trim(v.toFixed(digits - 1 - exp));
}

// bp::FormatNumber (lib/base/include/bp/decimal.h), for messages: printf's %g
// at the fewest significant digits, 6 to 17, that read back as v ("60",
// "1e-06", "8.64e+07", "1.6666666666666667e-05").
export function formatNumber(v) {
  for (let digits = 6; digits <= 17; digits++) {
    const text = printfG(v, digits);
    if (Number(text) === v) return text;
  }
  return printfG(v, 17);
}

// bp::RangeText: "[0.001, 3600]", "(0, 1)"; with no upper bound ">= 0".
function rangeText([lo, hi, loOpen = false, hiOpen = false]) {
  if (hi === Infinity) return `${loOpen ? ">" : ">="} ${formatNumber(lo)}`;
  return `${loOpen ? "(" : "["}${formatNumber(lo)}, ${formatNumber(hi)}${hiOpen ? ")" : "]"}`;
}

// v when it is a number inside the range; else an Error in the C++ reader's
// words (gate_config_json.cpp): "NAME: must be a number in [1e-06, 1e+06], got -1".
function number(v, name, range, note = "", zeroIsDefault = false) {
  const [lo, hi, loOpen = false, hiOpen = false] = range;
  const inside = Number.isFinite(v) && v >= lo && v <= hi && !(loOpen && v === lo) && !(hiOpen && v === hi);
  if (typeof v === "number" && ((zeroIsDefault && v === 0) || inside)) return v;
  const rule = zeroIsDefault ? `must be 0 (the default) or a number in ${rangeText(range)}`
    : hi === Infinity ? `must be a finite number ${rangeText(range)}` : `must be a number in ${rangeText(range)}`;
  throw new Error(`${name}: ${rule}${note}, got ${JSON.stringify(v)}`);
}

function integer(v, name, [lo, hi]) {
  if (Number.isInteger(v) && v >= lo && v <= hi) return v;
  throw new Error(`${name}: must be an integer in [${lo}, ${hi}], got ${JSON.stringify(v)}`);
}

const isObject = (obj) => obj !== null && typeof obj === "object" && !Array.isArray(obj);

function only(obj, section, allowed) {
  if (!isObject(obj)) throw new Error(section ? `${section}: must be an object` : "document: must be a JSON object");
  for (const k of Object.keys(obj)) if (!allowed.includes(k)) throw new Error(`${section ? section + "." : ""}${k}: unknown field`);
}

function oneOf(v, name, names) {
  if (!names.includes(v)) throw new Error(`${name}: must be ${names.join(" | ")}, got ${JSON.stringify(v)}`);
  return v;
}

// [field, value, ...] for configure.lua "seed" from the parsed JSON object;
// an Error naming the field with the C++ reader's message
// (bp::GateConfigFromJson; the cases of tests/conformance/declared.json).
// "version" may be left out here (1), for configurations written in code.
export function seedPairs(config) {
  only(config, "", ["version", "caps", "priority_weights", "tenant_weights", "tuning"]);
  if ((config.version ?? 1) !== 1) throw new Error(`version: must be 1, got ${JSON.stringify(config.version)}`);
  if (!("caps" in config)) throw new Error("caps: missing (required; null when not configured)");
  const caps = config.caps;
  if (caps !== null) {
    only(caps, "caps", Object.keys(CAPS));
    if (!("requests_per_s" in caps)) throw new Error("caps.requests_per_s: missing (required)");
  }
  const pairs = [];
  for (const [key, [range, note, zeroIsDefault]] of Object.entries(CAPS)) {
    const v = caps !== null && key in caps ? number(caps[key], `caps.${key}`, range, note, zeroIsDefault)
      : key === "burst_s" ? 1 : 0;
    pairs.push(key, key.startsWith("max_cost") && v === 0 ? "" : fmt(v));
  }
  const omega = config.priority_weights ?? [];
  if (!Array.isArray(omega)) throw new Error(`priority_weights: must be an array of numbers, got ${JSON.stringify(omega)}`);
  omega.forEach((w, k) => pairs.push(`omega:${k + 1}`, fmt(number(w, `priority_weights[${k}]`, WEIGHT))));
  pairs.push("omega_sum", omega.length ? fmt(omega.reduce((a, b) => a + b, 0)) : "",
    "classes", omega.length ? String(omega.length) : "");
  const weights = config.tenant_weights ?? {};
  if (!isObject(weights)) throw new Error(`tenant_weights: must be an object of numbers, got ${JSON.stringify(weights)}`);
  const weightPairs = [];
  for (const [tenant, w] of Object.entries(weights)) {
    if (!validTenant(tenant)) throw new Error(`tenant_weights.${tenant}: ${TENANT_RULE}`);
    weightPairs.push(`tw:${tenant}`, fmt(number(w, `tenant_weights.${tenant}`, WEIGHT)));
  }
  const tuning = config.tuning ?? {};
  only(tuning, "tuning", [...Object.keys(TUNING), "adapt", "share_rule", "class_policy"]);
  for (const [key, range] of Object.entries(TUNING)) {
    if (!(key in tuning)) { pairs.push(key, ""); continue; }
    const name = `tuning.${key}`;
    pairs.push(key, fmt(INTEGER_TUNING.includes(key) ? integer(tuning[key], name, range) : number(tuning[key], name, range)));
  }
  const adapt = tuning.adapt ?? false;
  if (typeof adapt !== "boolean") throw new Error(`tuning.adapt: must be true or false, got ${JSON.stringify(adapt)}`);
  const share = oneOf(tuning.share_rule ?? "hier", "tuning.share_rule", ["hier", "flat"]);
  const policy = oneOf(tuning.class_policy ?? "fair", "tuning.class_policy", ["fair", "strict"]);
  pairs.push("adapt", adapt ? "1" : "0", "share_rule", share, "class_policy", policy);
  if (omega.length > MAX_CLASSES) throw new Error(`priority_weights: at most ${MAX_CLASSES} classes, got ${omega.length}`);
  if (caps === null) throw new Error("caps: required (the gate needs caps)");
  return pairs.concat(weightPairs);
}

// Seed pairs from a parsed object, a JSON text, or the path of a JSON file
// (`bpctl export > target.json`); errors start with the path.
export function readDeclaredConfig(source) {
  if (typeof source === "object" && source !== null) return seedPairs(source);
  const isText = String(source).trimStart().startsWith("{");
  const where = isText ? "declared configuration" : String(source);
  try {
    return seedPairs(JSON.parse(isText ? source : readFileSync(source, "utf8")));
  } catch (e) {
    throw new Error(`${where}: ${e.message}`);
  }
}
