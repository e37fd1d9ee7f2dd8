#!/usr/bin/env node
// A worker that puts the gate in front of its LLM calls (docs/clients.md).
//
// For each call: admit; on defer free the slot and come back after deltaMs
// (a sleep here; in a workflow engine a durable timer); on admit call the
// OpenAI-compatible API (mockapi) with the official openai SDK, then release
// with the usage the answer reports; on a 429 release with the upstream
// report, wait its retry-after and ask again. Prints one JSON line of totals.
//
//   BP_VALKEY_URL=redis://127.0.0.1:6379 BP_MOCKAPI_URL=http://127.0.0.1:8080 \
//     node clients/node/examples/worker.mjs --tenant acme --calls 50
import { parseArgs } from "node:util";
import OpenAI from "openai";
import { Gate } from "../gate.mjs";

const { values: opt } = parseArgs({ options: {
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
} });

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
// x-ratelimit-reset-* as Go durations ("19.75s", "750ms", "6m0s") in ms; -1 absent.
function goDurationMs(s) {
  if (!s) return -1;
  const units = { h: 3600e3, m: 60e3, s: 1e3, ms: 1, us: 1e-3, ns: 1e-6 };
  let total = 0;
  for (const [, v, u] of s.matchAll(/([0-9.]+)(ms|us|ns|h|m|s)/g)) total += Number(v) * units[u];
  return total;
}
const headerInt = (h, name) => (/^-?\d+$/.test(h.get(name) ?? "") ? Number(h.get(name)) : -1);

const gate = new Gate(opt.target, { url: opt.valkey, timeoutMs: Number(opt["timeout-ms"]) });
const openai = new OpenAI({ baseURL: `${opt.mockapi.replace(/\/$/, "")}/v1`, apiKey: "sk-example", maxRetries: 0 });
const totals = { ok: 0, throttled: 0, defers: 0, rejects: 0, errors: 0, tokens: 0 };
const maxTokens = Number(opt["max-tokens"]);
const prompt = "Summarize the quarterly report. ".repeat(Number(opt["prompt-words"]));
const estimate = Math.floor(prompt.length / 4) + maxTokens;  // prompt + completion bound

async function oneCall() {
  for (;;) {
    const d = await gate.admit(opt.tenant, Number(opt.priority), { requests: 1, tokens: estimate });
    if (d.kind === "defer") { totals.defers++; await sleep(d.deltaMs); continue; }  // a durable timer in a workflow engine
    if (d.kind === "reject") { totals.rejects++; return; }
    try {
      const r = await openai.chat.completions.create({ model: opt.model, max_tokens: maxTokens,
        messages: [{ role: "user", content: prompt }] });
      const used = r.usage?.total_tokens ?? estimate;
      totals.ok++; totals.tokens += used;
      await gate.release(d.ticket, used);
      return;
    } catch (e) {
      if (e?.status !== 429) { totals.errors++; await gate.release(d.ticket, 0); return; }
      totals.throttled++;
      const h = e.headers;
      const bound = h.get("x-mockapi-bound") ?? e.error?.type ?? "";
      const retryMs = Number(h.get("retry-after-ms") ?? 1000 * Number(h.get("retry-after") ?? 1));
      await gate.release(d.ticket, estimate, { upstream429: {
        bound: ["requests", "tokens"].includes(bound) ? bound : "", retryAfterMs: retryMs,
        remainingRequests: headerInt(h, "x-ratelimit-remaining-requests"),
        resetRequestsMs: goDurationMs(h.get("x-ratelimit-reset-requests")),
        remainingTokens: headerInt(h, "x-ratelimit-remaining-tokens"),
        resetTokensMs: goDurationMs(h.get("x-ratelimit-reset-tokens")) } });
      if (h.get("x-should-retry") === "false") return;  // "Request too large": it can never pass
      await sleep(retryMs);
    }
  }
}

const start = Date.now();
let next = 0;
const calls = Number(opt.calls);
await Promise.all(Array.from({ length: Number(opt.slots) }, async () => {
  while (next < calls) { next++; await oneCall(); }
}));
console.log(JSON.stringify({ ...totals, tenant: opt.tenant, client: "node", seconds: (Date.now() - start) / 1000, fail_opens: gate.counters.failOpens }));
await gate.close();
