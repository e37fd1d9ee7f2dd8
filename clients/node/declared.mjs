// The target's declared configuration: the JSON of `bpctl export`, `bpctl
// import` and `loadgen --gate-config` (its owner is
// lib/gate/include/bp/gate_config_json.h), read into the field/value pairs
// configure.lua's "seed" mode writes (docs/store-restart.md). Parsing is
// strict as in C++: unknown fields, wrong types and values outside the
// ranges tools accept throw an Error naming the field, so an invalid
// configuration is never written. A tuning field left out is sent empty,
// which deletes it: the script's default applies (prelude.lua owns the
// defaults). The pairs are those configure.lua's "declare" mode writes
// for the same JSON (docs/protocol.md);
// clients/python/backpressure/declared.py is the same reader in Python. One
// difference: a key repeated within one object is not refused here
// (JSON.parse keeps the last), where C++ and Python refuse it.
import { readFileSync } from "node:fs";
import { validTenant } from "./rules.mjs";

// [min, max, minOpen, maxOpen]: bp/gate_ranges.h's ranges.
const CAPS = {
  requests_per_s: [1e-3 / 60, 1e9 / 60], tokens_per_s: [0, 1e12 / 60], burst_s: [1e-3, 3600],
  max_cost_requests: [0, 1e9], max_cost_tokens: [0, 1e12],
};
const TUNING = {
  slack_ms: [0, Infinity, false, true], lend_fraction: [0, 1], grace_ms: [0, Infinity, false, true],
  ticket_ttl_ms: [1, 2 ** 53], adapt_beta: [0, 1, true, true], adapt_recover_ms: [0, 86400000, true],
  adapt_window_ms: [0, 3600000], adapt_min_429: [1, 1000000],
};
const INTEGER_TUNING = ["ticket_ttl_ms", "adapt_min_429"];
const WEIGHT = [1e-6, 1e6];  // kMinGateWeight, kMaxGateWeight
const MAX_CLASSES = 100;

// The shortest decimal text that reads back as v ("60", "0.5", "1e+300").
export const fmt = (v) => String(v);

function number(v, name, [lo, hi, loOpen = false, hiOpen = false]) {
  if (typeof v !== "number" || !Number.isFinite(v)) throw new Error(`${name}: must be a number`);
  if (v < lo || v > hi || (loOpen && v === lo) || (hiOpen && v === hi)) {
    throw new Error(`${name}: must be in ${loOpen ? "(" : "["}${fmt(lo)}, ${fmt(hi)}${hiOpen ? ")" : "]"}, got ${fmt(v)}`);
  }
  return v;
}

function only(obj, section, allowed) {
  if (obj === null || typeof obj !== "object" || Array.isArray(obj)) throw new Error(`${section || "configuration"}: must be an object`);
  for (const k of Object.keys(obj)) if (!allowed.includes(k)) throw new Error(`${section ? section + "." : ""}${k}: unknown field`);
}

// [field, value, ...] for configure.lua "seed" from the parsed JSON object.
export function seedPairs(config) {
  only(config, "", ["version", "caps", "priority_weights", "tenant_weights", "tuning"]);
  if ((config.version ?? 1) !== 1) throw new Error(`version: must be 1, got ${config.version}`);
  const caps = config.caps;
  if (caps === null || caps === undefined) throw new Error("caps: required");
  only(caps, "caps", Object.keys(CAPS));
  if (!("requests_per_s" in caps)) throw new Error("caps.requests_per_s: required");
  const pairs = [];
  for (const [key, range] of Object.entries(CAPS)) {
    const v = key in caps ? number(caps[key], `caps.${key}`, range) : key === "burst_s" ? 1 : 0;
    const maxCost = key.startsWith("max_cost");
    if (maxCost && v > 0 && v < 1) throw new Error(`caps.${key}: must be 0 (default) or >= 1, got ${fmt(v)}`);
    pairs.push(key, maxCost && v === 0 ? "" : fmt(v));
  }
  const omega = config.priority_weights ?? [];
  if (!Array.isArray(omega) || omega.length > MAX_CLASSES) throw new Error(`priority_weights: must be a list of at most ${MAX_CLASSES} numbers`);
  omega.forEach((w, k) => pairs.push(`omega:${k + 1}`, fmt(number(w, `priority_weights[${k}]`, WEIGHT))));
  pairs.push("omega_sum", omega.length ? fmt(omega.reduce((a, b) => a + b, 0)) : "",
    "classes", omega.length ? String(omega.length) : "");
  const tuning = config.tuning ?? {};
  only(tuning, "tuning", [...Object.keys(TUNING), "adapt", "share_rule", "class_policy"]);
  for (const [key, range] of Object.entries(TUNING)) {
    if (!(key in tuning)) { pairs.push(key, ""); continue; }
    const v = number(tuning[key], `tuning.${key}`, range);
    if (INTEGER_TUNING.includes(key) && !Number.isInteger(v)) throw new Error(`tuning.${key}: must be an integer, got ${fmt(v)}`);
    pairs.push(key, fmt(v));
  }
  const adapt = tuning.adapt ?? false;
  if (typeof adapt !== "boolean") throw new Error("tuning.adapt: must be true or false");
  const share = tuning.share_rule ?? "hier";
  if (share !== "hier" && share !== "flat") throw new Error('tuning.share_rule: must be "hier" or "flat"');
  const policy = tuning.class_policy ?? "fair";
  if (policy !== "fair" && policy !== "strict") throw new Error('tuning.class_policy: must be "fair" or "strict"');
  pairs.push("adapt", adapt ? "1" : "0", "share_rule", share, "class_policy", policy);
  const weights = config.tenant_weights ?? {};
  only(weights, "tenant_weights", Object.keys(weights));
  for (const [tenant, w] of Object.entries(weights)) {
    if (!validTenant(tenant)) throw new Error(`tenant_weights.${tenant}: tenant must match [A-Za-z0-9_.-]{1,128}`);
    pairs.push(`tw:${tenant}`, fmt(number(w, `tenant_weights.${tenant}`, WEIGHT)));
  }
  return pairs;
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
