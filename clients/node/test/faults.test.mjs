// Faults and bad input against a real server: the circuit breaker on a
// settable clock, fail-open causes with the C++ client's names, the declared
// configuration (strict parsing, the seed it writes), and a server killed
// hard and replaced by an empty one on the same port: the client fails open,
// then re-seeds the target and resumes gating.
import { test } from "node:test";
import assert from "node:assert/strict";
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { CAUSE_COUNTERS, CircuitBreaker, Gate, readDeclaredConfig } from "../gate.mjs";
import { Server, freePort } from "./server.mjs";

const T0 = 1_700_000_000_000;
const DECLARED = { version: 1, caps: { requests_per_s: 10, tokens_per_s: 1000, burst_s: 1 },
  priority_weights: [0.5, 0.3, 0.2], tenant_weights: { acme: 2 },
  tuning: { slack_ms: 50, share_rule: "flat" } };
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const settable = () => { const c = () => c.t; c.t = 100_000; return c; };  // ms

test("the breaker's states on a settable clock", () => {
  const c = settable();
  const b = new CircuitBreaker(1000, c);
  assert.equal(b.allow(), true);
  b.onFailure();                                   // closed -> open at 100 s
  assert.deepEqual([b.state, b.opens, b.allow()], ["open", 1, false]);
  c.t += 999;
  assert.equal(b.allow(), false);                  // 999 ms < cool-off
  c.t += 1;
  assert.deepEqual([b.allow(), b.state], [true, "half-open"]);  // this caller probes
  assert.equal(b.allow(), false);                  // others wait for the probe
  b.onFailure();                                   // half-open -> open again
  b.onFailure();                                   // already open: unchanged
  assert.equal(b.opens, 2);
  c.t += 1000;
  assert.equal(b.allow(), true);
  b.onSuccess();
  assert.deepEqual([b.state, b.allow()], ["closed", true]);
  const off = new CircuitBreaker(0, c);
  off.onFailure();
  assert.deepEqual([off.allow(), off.opens], [true, 0]);
});

test("causes are counted and the breaker skips a dead server", async () => {
  const c = settable();
  const g = new Gate("dead", { url: `redis://127.0.0.1:${await freePort()}`, timeoutMs: 500, clock: c });
  try {
    const first = await g.admit("a", 1, { tokens: 1 });
    assert.deepEqual([first.failOpen, first.cause, first.ticket], [true, "unreachable", null]);
    for (let i = 0; i < 5; i++) {                  // within the cool-off: nothing sent
      const d = await g.admit("a", 1, { tokens: 1 });
      assert.equal(d.cause, "unreachable");
      assert.match(d.reason, /^circuit breaker open: a gate call to valkey found it unreachable/);
    }
    assert.deepEqual([g.counters.breakerSkips, g.breaker.opens], [5, 1]);
    assert.deepEqual([g.counters.failOpens, g.counters.failOpensUnreachable], [6, 6]);
    c.t += 1000;                                   // one probe, which fails again
    assert.doesNotMatch((await g.admit("a", 1, { tokens: 1 })).reason, /circuit breaker/);
    assert.deepEqual([g.breaker.opens, g.counters.breakerSkips], [2, 5]);
    assert.deepEqual(Object.keys(CAUSE_COUNTERS), ["unreachable", "timed out", "target not configured", "server error"]);
  } finally { g.client.disconnect(); }
});

test("a paused server times out once per cool-off", async () => {
  const server = await Server.create();
  const c = settable();
  const g = new Gate("paused", { url: server.url, timeoutMs: 200, clock: c });
  try {
    assert.equal(await g.configure({ requests_per_s: 10 }), true);
    await g.client.call("CLIENT", "PAUSE", "1500", "ALL");
    const d = await g.admit("a", 1, { tokens: 1 });
    assert.equal(d.cause, "timed out");
    const skipped = await g.admit("a", 1, { tokens: 1 });
    assert.match(skipped.reason, /^circuit breaker open: a gate call to valkey timed out/);
    assert.deepEqual([g.counters.failOpensTimedOut, g.counters.breakerSkips], [2, 1]);
  } finally { g.client.disconnect(); await server.stop(); }
});

test("a declared configuration file: the same pairs, errors start with the path", () => {
  const dir = mkdtempSync(join(tmpdir(), "bp-declared-"));
  const f = join(dir, "target.json");
  writeFileSync(f, JSON.stringify(DECLARED));
  assert.deepEqual(readDeclaredConfig(f), readDeclaredConfig(DECLARED));
  writeFileSync(f, "{\"caps\": ");
  assert.throws(() => new Gate("t", { declaredConfig: f }), new RegExp(`^Error: ${f}: `));
});

test("a seed writes the declared configuration once", async () => {
  const server = await Server.create();
  const g = new Gate("seeded", { url: server.url, timeoutMs: 2000, declaredConfig: DECLARED });
  const racer = new Gate("seeded", { url: server.url, timeoutMs: 2000, declaredConfig: DECLARED });
  try {
    assert.equal(await g.reseed(T0), null);
    assert.equal(await racer.reseed(T0), null);    // configured already: nothing written
    assert.deepEqual([g.counters.reseeds, racer.counters.reseeds], [1, 0]);
    const raw = await g.client.hmget(g.key, "requests_per_s", "tokens_per_s", "classes", "omega:3",
      "tw:acme", "share_rule", "lend_fraction");
    assert.deepEqual(raw, ["10", "1000", "3", "0.2", "2", "flat", null]);  // lend_fraction: the script's default
  } finally { await g.close(); await racer.close(); await server.stop(); }
});

// `bpctl export` always prints tuning.class_policy; a worker given that file
// must seed it, strict included, not refuse it as unknown.
test("the class policy of bpctl export is read and seeded", async () => {
  const fair = readDeclaredConfig({ caps: { requests_per_s: 1 } });
  assert.equal(fair[fair.indexOf("class_policy") + 1], "fair");  // absent: the default
  const server = await Server.create();
  const config = { ...DECLARED, tuning: { ...DECLARED.tuning, class_policy: "strict" } };
  const g = new Gate("strict-seed", { url: server.url, timeoutMs: 2000, declaredConfig: config });
  try {
    assert.equal(await g.reseed(T0), null);
    assert.equal(g.counters.reseeds, 1);
    assert.equal(await g.client.hget(g.key, "class_policy"), "strict");
  } finally { await g.close(); await server.stop(); }
});

test("a killed server replaced by an empty one is re-seeded and gating resumes", async () => {
  const server = await Server.create();
  const c = settable();
  const g = new Gate("restart-seed", { url: server.url, timeoutMs: 2000, clock: c, declaredConfig: DECLARED });
  const warnings = [];
  const warn = console.warn;
  console.warn = (m) => warnings.push(String(m));
  try {
    assert.equal(await g.configure({ requests_per_s: 10, tokens_per_s: 1000 }), true);
    const before = await g.admit("acme", 1, { tokens: 100, nowMs: T0 });
    assert.equal(before.ticket.id, "1");
    await server.kill();
    const down = await g.admit("acme", 1, { tokens: 100, nowMs: T0 });
    assert.deepEqual([down.failOpen, down.cause], [true, "unreachable"]);
    assert.match((await g.admit("acme", 1, { tokens: 100, nowMs: T0 })).reason, /^circuit breaker open/);
    assert.equal(await g.release(before.ticket, 50), false);
    assert.equal(g.counters.releaseErrors, 1);
    await server.start();                          // same port, empty
    let back;
    for (let i = 0; i < 50; i++) {                 // until iovalkey has reconnected
      c.t += 1000;                                 // past the cool-off: one probe
      back = await g.admit("acme", 1, { tokens: 100, nowMs: T0 + 5000 });
      if (!back.failOpen) break;
      await sleep(50);
    }
    // Seeded with empty buckets at T0 + 5 s: 10 req/s, 1000 tok/s from 0.
    assert.equal(back.kind, "defer");
    assert.match(back.binding, /^l1:/);
    assert.equal(g.counters.reseeds, 1);
    const ok = await g.admit("acme", 1, { tokens: 100, nowMs: T0 + 6000 });  // 1 s of refill
    assert.equal(ok.ticket.id, String((T0 + 5000) * 1000 + 1));  // the counter starts at now in us
    const st = await g.state();
    assert.deepEqual([Number(st.l1_requests), Number(st.l1_tokens)], [9, 900]);
    assert.equal(g.counters.failOpens, g.counters.failOpensUnreachable);
    assert.equal(await g.release(before.ticket, 50), false);  // sent once already: refused here
    assert.equal(g.counters.duplicateReleases, 1);
    await g.client.del(g.key);                     // a second loss: no second warning
    c.t += 2000;
    assert.equal((await g.admit("acme", 1, { tokens: 100, nowMs: T0 + 9000 })).kind, "defer");
    assert.equal(g.counters.reseeds, 2);
    assert.equal(warnings.filter((w) => w.includes("re-seeded it from the declared configuration")).length, 1);
  } finally { console.warn = warn; await g.close(); await server.stop(); }
});
