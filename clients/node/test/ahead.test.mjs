// Admit ahead (admit's aheadMs) against a real server: the exact startInMs,
// ARGV[10] sent only when aheadMs > 0, invalid values refused without a round
// trip, and the example worker's call (examples/one_call.mjs) waiting
// startInMs before it calls the provider. 10 req/s and 1000 tok/s with a 1 s
// bucket throughout, the numbers of tests/gate/gate_model_ahead_test.cpp.
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { Gate, INVALID_REQUEST } from "../gate.mjs";
import { oneCall } from "../examples/one_call.mjs";
import { Server } from "./server.mjs";

const CAPS = { requests_per_s: 10, tokens_per_s: 1000 };
const T0 = 1_700_000_000_000;
let server;
before(async () => { server = await Server.create(); });
after(async () => { await server.stop(); });

async function fresh(name) {
  const g = new Gate(name, { url: server.url, timeoutMs: 2000 });
  await g.client.del(g.key);
  assert.equal(await g.configure(CAPS), true);
  return g;
}

// Wraps gate.eval; returns the list of [script, args] it is called with.
function recordScriptArgs(gate) {
  const sent = [];
  const real = gate.eval.bind(gate);
  gate.eval = (name, args) => { sent.push([name, [...args]]); return real(name, args); };
  return sent;
}

test("a call admitted ahead carries startInMs", async () => {
  const g = await fresh("ahead-exact");
  try {
    const sent = recordScriptArgs(g);
    const first = await g.admit("a", 1, { tokens: 900, nowMs: T0 });  // 1000 -> 100 tokens
    assert.equal(first.startInMs, 0);
    // +100 ms: 100 -> 200 tokens; 250 needed is 50 ms of refill, within 100.
    const d = await g.admit("a", 1, { tokens: 250, nowMs: T0 + 100, aheadMs: 100 });
    assert.deepEqual([d.kind, d.failOpen, d.ticket.id, d.startInMs], ["admit", false, "2", 50]);
    assert.equal(Number((await g.state()).l1_tokens), -50);  // 200 - 250: the debt the refill pays
    assert.deepEqual(sent.slice(0, 2).map(([, args]) => args.length), [9, 10]);  // ARGV[10] only when > 0
    assert.equal(sent[1][1][9], 100);
    // The next call needs (50 + 100) / 1000 s = 150 ms > 100: deferred.
    assert.deepEqual(await g.admit("a", 1, { tokens: 100, nowMs: T0 + 100, aheadMs: 100 }),
      { kind: "defer", deltaMs: 150, binding: "l1:tokens" });
  } finally { await g.close(); }
});

test("without aheadMs the same call is deferred", async () => {
  const g = await fresh("ahead-off");
  try {
    assert.equal((await g.admit("a", 1, { tokens: 900, nowMs: T0 })).kind, "admit");
    assert.deepEqual(await g.admit("a", 1, { tokens: 250, nowMs: T0 + 100 }),
      { kind: "defer", deltaMs: 50, binding: "l1:tokens" });
    assert.equal(Number((await g.state()).l1_tokens), 200);  // nothing debited
  } finally { await g.close(); }
});

test("a bad aheadMs is rejected without a round trip", async () => {
  const g = new Gate("never-connects", { url: "redis://127.0.0.1:1", timeoutMs: 100 });
  const sent = recordScriptArgs(g);
  const bad = [-1, 2.5, true, false, "100", null, Number.NaN, 2 ** 53];
  for (const aheadMs of bad) {
    assert.deepEqual(await g.admit("a", 1, { tokens: 1, aheadMs }), { kind: "reject", reason: INVALID_REQUEST }, String(aheadMs));
  }
  assert.ok(INVALID_REQUEST.endsWith("costs >= 0, ahead_ms >= 0"));
  assert.deepEqual(sent, []);
  assert.deepEqual([g.counters.rejects, g.counters.failOpens], [bad.length, 0]);
  g.client.disconnect();
});

// The example worker's call of 250 tokens at +100 ms, after 900 tokens at 0,
// on an explicit script clock that its waits move forward; the provider
// answers at once with 250 tokens used. Resolves the events: each decision,
// each wait, the provider call with its time from T0.
async function runExampleCall(name, aheadMs) {
  const g = await fresh(name);
  try {
    assert.equal((await g.admit("w", 1, { tokens: 900, nowMs: T0 })).kind, "admit");  // 1000 -> 100 tokens
    const events = [];
    let nowMs = T0 + 100;
    const gate = {
      admit: async (tenant, priority, o) => {
        const d = await g.admit(tenant, priority, { ...o, nowMs });
        events.push(["admit", d.kind, d.startInMs]);
        return d;
      },
      release: (ticket, tokens, o) => g.release(ticket, tokens, { ...o, nowMs }),
    };
    const openai = { chat: { completions: { create: () => ({ withResponse: async () => {
      events.push(["call", nowMs - T0]);
      return { data: { usage: { total_tokens: 250 } }, response: { headers: new Headers() } };
    } }) } } };
    const wait = async (ms) => { events.push(["wait", ms]); nowMs += ms; };
    const totals = { ok: 0, throttled: 0, defers: 0, rejects: 0, errors: 0, tokens: 0 };
    const admitted = { admits: 0, admitted_tokens: 0 };
    // 200 prompt tokens + 50 maxTokens = 250 admitted.
    await oneCall({ gate, openai, tenant: "w", priority: 1, model: "m", prompt: "p", maxTokens: 50,
      estimate: 250, aheadMs, totals, admitted, okPerS: {}, wait });
    assert.deepEqual([totals.ok, admitted.admitted_tokens], [1, 250]);
    return events;
  } finally { await g.close(); }
}

test("the example worker waits startInMs before the provider call", async () => {
  // Admitted at +100 ms to start in 50 ms: the wait, then the call.
  assert.deepEqual(await runExampleCall("ahead-worker", 100),
    [["admit", "admit", 50], ["wait", 50], ["call", 150]]);
});

test("the example worker without aheadMs is deferred, then admitted", async () => {
  assert.deepEqual(await runExampleCall("ahead-worker-off", 0),
    [["admit", "defer", undefined], ["wait", 50], ["admit", "admit", 0], ["call", 150]]);
});
