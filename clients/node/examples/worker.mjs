#!/usr/bin/env node
// A worker that puts the gate in front of its LLM calls (docs/clients.md).
//
// For each call (one_call.mjs): admit; on defer free the slot and come back
// after deltaMs (a sleep here; in a workflow engine a durable timer); on
// admit wait its startInMs (0 unless --ahead-ms lets the gate admit a call
// ahead of the bucket's refill; the slot is held meanwhile), call the
// OpenAI-compatible API (mockapi) with the official openai SDK, then release
// with the usage the answer reports; on a 429 release with the upstream
// report, wait its retry-after and ask again. Prints one JSON line of totals.
//
// With --seconds the worker keeps every slot busy until that much time has
// passed (from --start-at, a unix ms shared with other processes, else now)
// and then finishes the calls in flight: the mixed run
// (scripts/mixed-workers.sh) uses it, with --summary FILE for the totals plus
// OK answers per unix second. --declared-config FILE (`bpctl export`) lets the
// gate re-seed a target whose store lost its state.
//
//   BP_VALKEY_URL=redis://127.0.0.1:6379 BP_MOCKAPI_URL=http://127.0.0.1:8080 \
//     node clients/node/examples/worker.mjs --tenant acme --calls 50
import { writeFileSync } from "node:fs";
import { parseArgs } from "node:util";
import OpenAI from "openai";
import { Gate } from "../gate.mjs";
import { oneCall, sleep } from "./one_call.mjs";

const options = {
  tenant: { type: "string", default: "node-worker" },
  priority: { type: "string", default: "1" },
  calls: { type: "string", default: "20" },
  slots: { type: "string", default: "4" },
  target: { type: "string", default: process.env.BP_TARGET ?? "default" },
  valkey: { type: "string", default: process.env.BP_VALKEY_URL ?? "redis://127.0.0.1:6379" },
  mockapi: { type: "string", default: process.env.BP_MOCKAPI_URL ?? "http://127.0.0.1:8080" },
  model: { type: "string", default: "gpt-4o-mini" },
  "prompt-words": { type: "string", default: "20" },
  "max-tokens": { type: "string", default: "64" },
  "timeout-ms": { type: "string", default: "200" },  // per gate command; then fail open
  // the longest wait before a call this worker keeps, holding its slot, when
  // the gate admits it ahead of the bucket's refill (0: never)
  "ahead-ms": { type: "string", default: "0" },
  seconds: { type: "string", default: "0" },  // run this long, whatever --calls says
  "start-at": { type: "string", default: "0" },  // unix ms to start at (0: now)
  summary: { type: "string" },  // also write the totals and OK answers per second here
  "declared-config": { type: "string" },  // the target's `bpctl export` JSON, to re-seed it
  help: { type: "boolean", short: "h" },
};
const usage = `usage: node worker.mjs [--${Object.keys(options).filter((k) => k !== "help").join(" V] [--")} V]
(defaults and meanings: clients/node/examples/worker.mjs, docs/clients.md)`;
// A bad flag is refused by name, before any call, with exit 2: a worker that
// ran no call and exited 0 would look like a finished one.
function refuse(message) {
  console.error(`worker.mjs: ${message}\n${usage}`);
  process.exit(2);
}
let opt;
try {
  ({ values: opt } = parseArgs({ options }));
} catch (e) {
  refuse(e.message);
}
if (opt.help) { console.log(usage); process.exit(0); }
for (const [flag, low] of [["calls", 1], ["slots", 1], ["priority", 1], ["prompt-words", 0],
  ["max-tokens", 1], ["timeout-ms", 1], ["seconds", 0], ["start-at", 0], ["ahead-ms", 0]]) {
  const v = Number(opt[flag]);
  // Integers in plain decimal digits, as the Python worker reads them (not
  // 1e3 or 0x10), and exact in a double.
  if (opt[flag].trim() === "" || !Number.isFinite(v) || v < low ||
      (flag !== "seconds" && (!/^[0-9]+$/.test(opt[flag]) || !Number.isSafeInteger(v)))) {
    refuse(`--${flag} must be ${flag === "seconds" ? "a number" : "an integer"} >= ${low}, got ${JSON.stringify(opt[flag])}`);
  }
}

let gate;
try {
  gate = new Gate(opt.target, { url: opt.valkey, timeoutMs: Number(opt["timeout-ms"]),
    declaredConfig: opt["declared-config"] });
} catch (e) {
  refuse(opt["declared-config"] === undefined ? e.message : `--declared-config: ${e.message}`);
}
const openai = new OpenAI({ baseURL: `${opt.mockapi.replace(/\/$/, "")}/v1`, apiKey: "sk-example", maxRetries: 0 });
const totals = { ok: 0, throttled: 0, defers: 0, rejects: 0, errors: 0, tokens: 0 };
const admitted = { admits: 0, admitted_tokens: 0 };
const okPerS = {};  // unix second -> [OK answers, their tokens]
const maxTokens = Number(opt["max-tokens"]);
const prompt = "Summarize the quarterly report. ".repeat(Number(opt["prompt-words"]));
const estimate = Math.floor(prompt.length / 4) + maxTokens;  // prompt + completion bound
const call = { gate, openai, tenant: opt.tenant, priority: Number(opt.priority), model: opt.model,
  prompt, maxTokens, estimate, aheadMs: Number(opt["ahead-ms"]), totals, admitted, okPerS };

const startAt = Number(opt["start-at"]);
if (startAt > 0) await sleep(Math.max(0, startAt - Date.now()));
const start = Date.now();
let next = 0;
const calls = Number(opt.calls);
const seconds = Number(opt.seconds);
const more = () => (seconds > 0 ? Date.now() - start < seconds * 1000 : next < calls);
await Promise.all(Array.from({ length: Number(opt.slots) }, async () => {
  while (more()) { next++; await oneCall(call); }
}));
const line = { ...totals, tenant: opt.tenant, client: "node", seconds: (Date.now() - start) / 1000, fail_opens: gate.counters.failOpens };
console.log(JSON.stringify(line));
if (opt.summary) {
  writeFileSync(opt.summary, JSON.stringify({ ...line, ...admitted, start_unix_s: start / 1000,
    counters: gate.counters, ok_per_s: okPerS }));
}
await gate.close();
