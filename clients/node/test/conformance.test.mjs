// Every case of tests/conformance/cases.json (docs/protocol.md,
// "Conformance") through this client against a real server.
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { Gate, PROTOCOL_VERSION } from "../gate.mjs";
import { Server } from "./server.mjs";

const CASES = JSON.parse(readFileSync(new URL("../../../tests/conformance/cases.json", import.meta.url)));
let server;
before(async () => { server = await Server.create(); });
after(async () => { await server.stop(); });

function stateFields(got) {
  const out = { ...got };
  for (const q of got.queues) {
    const f = {};
    for (let i = 0; i < q.length; i += 2) f[q[i]] = q[i + 1];
    for (const name of ["tag", "backlogged", "admits", "defers", "lent"]) out[`queue:${f.priority}:${f.tenant}:${name}`] = f[name];
  }
  return out;
}

test("the file names this protocol", () => assert.equal(CASES.protocol_version, PROTOCOL_VERSION));

for (const c of CASES.cases) {
  test(c.name, async () => {
    const gate = new Gate(`conformance-node-${c.name}`, { url: server.url, mode: c.mode ?? "reconcile", timeoutMs: 2000 });
    try {
      await gate.client.del(gate.key);
      assert.equal(await gate.configure(c.config), true);
      const tickets = {};
      for (const [i, step] of c.steps.entries()) {
        const where = `${c.name} step ${i + 1}`;
        const nowMs = CASES.t0_ms + step.at_ms;
        const want = step.expect;
        if (step.admit) {
          const a = step.admit;
          const d = await gate.admit(a.tenant, a.priority ?? 1, { requests: a.requests ?? 1, tokens: a.tokens ?? 0, maxTokens: a.max_tokens ?? 0, nowMs, aheadMs: a.ahead_ms ?? 0 });
          assert.equal(d.kind, want.decision.toLowerCase(), `${where}: ${JSON.stringify(d)}`);
          if (d.kind === "admit") { assert.equal(d.failOpen, false, where); assert.equal(d.ticket.id, want.ticket, where); assert.equal(d.startInMs, want.start_in_ms ?? 0, where); tickets[d.ticket.id] = d.ticket; }
          if (d.kind === "defer") assert.deepEqual([d.deltaMs, d.binding], [want.delta_ms, want.binding], where);
          if (d.kind === "reject") assert.equal(d.reason, want.reason, where);
        } else {
          const r = step.release;
          const u = r.upstream;
          const upstream429 = u && { bound: u.bound, retryAfterMs: u.retry_after_ms, remainingRequests: u.remaining_requests, resetRequestsMs: u.reset_requests_ms, remainingTokens: u.remaining_tokens, resetTokensMs: u.reset_tokens_ms };
          const h = r.rate_limits;
          const rateLimits = h && { remainingRequests: h.remaining_requests, resetRequestsMs: h.reset_requests_ms, remainingTokens: h.remaining_tokens, resetTokensMs: h.reset_tokens_ms };
          const applied = await gate.release(tickets[r.ticket], r.tokens, { actualRequests: r.requests ?? 1, upstream429, rateLimits, nowMs });
          assert.equal(applied, want.applied, where);
        }
        const got = stateFields(await gate.state());
        for (const [name, value] of Object.entries(step.state ?? {})) {
          assert.ok(name in got, `${where}: state has no ${name}`);
          assert.ok(Math.abs(Number(got[name]) - value) <= 1e-9 * Math.max(1, Math.abs(value)), `${where}: ${name} ${got[name]} != ${value}`);
        }
      }
    } finally {
      await gate.close();
    }
  });
}
