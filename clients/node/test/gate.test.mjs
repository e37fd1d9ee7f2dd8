// The Node client against a real server: validation before sending, release
// once, fail-open with a counter across a server restart, NOSCRIPT recovery,
// and a one-node cluster.
import { test } from "node:test";
import assert from "node:assert/strict";
import { mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Gate, INVALID_REQUEST, defaultLuaDir, loadScripts, parseParts } from "../gate.mjs";
import Valkey from "iovalkey";
import { Server } from "./server.mjs";

const CAPS = { requests_per_s: 10, tokens_per_s: 1000 };
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

async function fresh(server, name, opts = {}) {
  const g = new Gate(name, { url: server.url, timeoutMs: 2000, ...opts });
  await g.client.del(g.key);
  assert.equal(await g.configure(CAPS), true);
  return g;
}

test("invalid input is rejected without a round trip", async () => {
  const g = new Gate("never-connects", { url: "redis://127.0.0.1:1", timeoutMs: 100 });
  const bad = [["a b", 1, {}], ["", 1, {}], ["x".repeat(129), 1, {}], ["é", 1, {}], ["a", 0, {}],
    ["a", 1.5, {}], ["a", true, {}], ["a", 1, { requests: -1 }], ["a", 1, { tokens: -5 }],
    ["a", 1, { tokens: 2.5 }], [null, 1, {}]];
  for (const [t, p, c] of bad) assert.deepEqual(await g.admit(t, p, c), { kind: "reject", reason: INVALID_REQUEST }, String(t));
  assert.equal(g.counters.rejects, 11);
  assert.equal(g.counters.failOpens, 0);
  const d = await g.admit("A-z_0.9", 1, { tokens: 1 });  // valid: reaches for the server, fails open
  assert.equal(d.failOpen, true);
  assert.equal(g.counters.failOpens, 1);
  g.client.disconnect();
});

test("scripts are the C++ build's text and name the protocol version", () => {
  const s = loadScripts();
  assert.ok(s.admit.text.startsWith("-- admit.lua: prelude.lua, then admit.lua\n-- prelude.lua"));
  const dir = mkdtempSync(join(tmpdir(), "bp-lua-"));
  for (const n of ["admit", "release", "configure", "state", "reset_buckets"]) writeFileSync(join(dir, `${n}.lua`), "-- x\n");
  writeFileSync(join(dir, "prelude.lua"), "local PROTOCOL_VERSION = 2\n");
  assert.throws(() => loadScripts(dir), /prelude.lua: protocol version 2, this client implements 1/);
  writeFileSync(join(dir, "prelude.lua"), "-- none\n");
  assert.throws(() => loadScripts(dir), /protocol version missing/);
  assert.throws(() => new Gate("t", { mode: "fast" }), /mode 'fast'/);
});

test("admit.lua is the prelude then its parts in order", () => {
  // parts.txt joins admit.lua and admit_decision.lua; the C++ and Python
  // tests assert the same text.
  const lua = defaultLuaDir();
  const expected = ["prelude.lua", "admit.lua", "admit_decision.lua"]
    .map((f) => readFileSync(join(lua, f), "utf8")).join("");
  assert.equal(loadScripts().admit.text, `-- admit.lua: prelude.lua, then admit.lua\n${expected}`);
  assert.deepEqual(parseParts("# a b\n\nx.lua\n a.lua  b.lua c.lua \n"), { "a.lua": ["a.lua", "b.lua", "c.lua"] });
});

test("release once, NOSCRIPT recovered, defer fields", async () => {
  const server = await Server.create();
  try {
    const g = await fresh(server, "once");
    const d = await g.admit("a", 1, { tokens: 100 });
    assert.equal(d.ticket.id, "1");
    assert.equal(await g.release(d.ticket, 40), true);   // 900 -> 960 tokens
    assert.equal(await g.release(d.ticket, 0), false);   // not sent again
    assert.equal(g.counters.releases, 1);
    assert.equal(g.counters.duplicateReleases, 1);
    await g.client.script("FLUSH");
    const e = await fresh(server, "explicit-time");  // its own clock: the scripts' now_ms
    const t0 = 1_700_000_000_000;
    assert.equal((await e.admit("b", 1, { tokens: 3000, nowMs: t0 })).kind, "admit");  // 1000 -> -2000
    assert.deepEqual(await e.admit("c", 1, { tokens: 100, nowMs: t0 }), { kind: "defer", deltaMs: 2100, binding: "l1:tokens" });
    assert.equal(g.counters.failOpens + e.counters.failOpens, 0);
    await g.close();
    await e.close();
  } finally { await server.stop(); }
});

test("a restart mid-run fails open, then gating resumes", async () => {
  const server = await Server.create();
  const g = new Gate("restart", { url: server.url, timeoutMs: 300 });
  try {
    await g.configure(CAPS);
    const first = await g.admit("a", 1, { tokens: 100 });
    assert.equal(first.ticket.id, "1");
    await server.stop();
    const down = await g.admit("a", 1, { tokens: 100 });
    assert.equal(down.failOpen, true);
    assert.equal(down.ticket, null);
    assert.equal(g.counters.failOpens, 1);
    assert.equal(await g.release(first.ticket, 50), false);
    assert.equal(g.counters.releaseErrors, 1);
    await server.start();  // same port, empty: scripts and configuration are gone
    let unconfigured;
    for (let i = 0; i < 50; i++) {  // until iovalkey has reconnected
      unconfigured = await g.admit("a", 1, { tokens: 100 });
      if (/target not configured/.test(unconfigured.reason ?? "")) break;
      await sleep(50);
    }
    assert.match(unconfigured.reason, /target not configured/);
    assert.equal(await g.configure(CAPS), true);
    const back = await g.admit("a", 1, { tokens: 100 });
    assert.equal(back.failOpen, false);
    assert.equal(back.ticket.id, "1");
    assert.equal(Number((await g.state()).l1_tokens), 900);
  } finally { await g.close(); await server.stop(); }
});

// A lone cluster node reports its own address as "" in CLUSTER SLOTS until it
// meets another node; iovalkey needs an address, so the node announces one.
test("a one-node cluster routes by the hash tag", async () => {
  const dir = mkdtempSync(join(tmpdir(), "bp-cluster-"));
  const server = await Server.create(["--cluster-enabled", "yes", "--cluster-config-file",
    join(dir, "nodes.conf"), "--cluster-announce-ip", "127.0.0.1"]);
  const admin = new Valkey(server.url);
  try {
    await admin.call("CLUSTER", "ADDSLOTSRANGE", "0", "16383");
    for (let i = 0; i < 200 && !(await admin.call("CLUSTER", "INFO")).includes("cluster_state:ok"); i++) await sleep(50);
    const g = new Gate("clustered", { url: `redis+cluster://127.0.0.1:${server.port}`, timeoutMs: 2000 });
    assert.equal(await g.configure(CAPS), true);
    const d = await g.admit("a", 1, { tokens: 100 });
    assert.equal(d.ticket?.id, "1", JSON.stringify(d));
    assert.equal(await g.release(d.ticket, 60), true);
    assert.equal(await admin.call("CLUSTER", "KEYSLOT", g.key), await admin.call("CLUSTER", "KEYSLOT", "clustered"));
    g.client.disconnect();
  } finally { admin.disconnect(); await server.stop(); }
});
