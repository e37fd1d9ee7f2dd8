// The gate client for Node workers: admit before an API call, release after
// it (docs/protocol.md), over iovalkey (single server or cluster).
//
// Fail-open: when the server is unreachable, times out or answers an error
// (an unconfigured target too), admit answers {kind: "admit", ticket: null,
// failOpen: true}, counts it in counters.failOpens and warns at most once per
// warnIntervalMs. iovalkey reconnects in the background, so gating resumes
// as soon as the server and the target's configuration are back. One Gate per
// target and process; calls may overlap (each is one command).
import { createHash } from "node:crypto";
import { readFileSync, existsSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import Valkey from "iovalkey";

// The protocol version this client implements; prelude.lua owns it.
export const PROTOCOL_VERSION = 1;
export const TENANT_RULE = "[A-Za-z0-9_.-]{1,128}";
export const INVALID_REQUEST =
  "invalid request: tenant must match [A-Za-z0-9_.-]{1,128}, priority >= 1, costs >= 0";
const MODES = ["estimate", "reconcile", "reservation"];
const SCRIPT_NAMES = ["admit", "release", "configure", "state", "reset_buckets"];

// The tenant rule of prelude.lua: 1-128 bytes of [A-Za-z0-9_.-].
export function validTenant(t) {
  return typeof t === "string" && /^[A-Za-z0-9_.-]{1,128}$/.test(t);
}
const isCount = (x) => Number.isSafeInteger(x) && x >= 0;

// The first directory holding prelude.lua: BP_GATE_LUA_DIR, the repository's
// lib/gate/lua/, an installed share directory.
export function defaultLuaDir() {
  const here = dirname(fileURLToPath(import.meta.url));
  const candidates = [process.env.BP_GATE_LUA_DIR, resolve(here, "../../lib/gate/lua"),
    "/usr/local/share/backpressure/lua", "/usr/share/backpressure/lua"].filter(Boolean);
  const found = candidates.find((d) => existsSync(join(d, "prelude.lua")));
  if (!found) {
    throw new Error("gate scripts not found: set BP_GATE_LUA_DIR to a directory holding " +
      `prelude.lua (lib/gate/lua/ of the backpressure source tree); looked in ${candidates.join(", ")}`);
  }
  return found;
}

// {name: {text, sha}}: each script as the server receives it (a comment line
// naming it, prelude.lua, the script: the C++ build's text, byte for byte).
// Throws when prelude.lua names no protocol version or another one.
export function loadScripts(luaDir = defaultLuaDir()) {
  const preludePath = join(luaDir, "prelude.lua");
  const prelude = readFileSync(preludePath, "utf8");
  const m = /^local PROTOCOL_VERSION = (\d+)/m.exec(prelude);
  const found = m ? Number(m[1]) : null;
  if (found !== PROTOCOL_VERSION) {
    throw new Error(`${preludePath}: protocol version ${m ? found : "missing"}, this client ` +
      `implements ${PROTOCOL_VERSION} (docs/protocol.md)`);
  }
  const out = {};
  for (const name of SCRIPT_NAMES) {
    const body = readFileSync(join(luaDir, `${name}.lua`), "utf8");
    const text = `-- ${name}.lua: prelude.lua, then ${name}.lua\n${prelude}${body}`;
    out[name] = { text, sha: createHash("sha1").update(text).digest("hex") };
  }
  return out;
}

const num = (v) => (Number.isInteger(v) ? String(v) : String(v));

// An iovalkey client for redis://host:port[/db], or a cluster client for
// redis+cluster://host:port[,host:port...].
function connect(url, timeoutMs) {
  const common = { commandTimeout: timeoutMs, connectTimeout: timeoutMs,
    maxRetriesPerRequest: 0, retryStrategy: () => 100, lazyConnect: false };
  if (url.startsWith("redis+cluster://")) {
    const nodes = url.slice("redis+cluster://".length).split("@").pop().split("/")[0].split(",")
      .map((hp) => { const i = hp.lastIndexOf(":"); return { host: hp.slice(0, i) || "127.0.0.1", port: Number(hp.slice(i + 1)) }; });
    return new Valkey.Cluster(nodes, { redisOptions: common, clusterRetryStrategy: () => 100,
      enableOfflineQueue: true, maxRedirections: 16 });
  }
  return new Valkey(url, common);
}

export class Gate {
  // target: the shared limit's name; url: redis://... or redis+cluster://...;
  // mode: "reconcile" (default), "reservation" or "estimate"; timeoutMs bounds
  // each command (a lost server costs a caller at most about that long).
  constructor(target, { url = "redis://127.0.0.1:6379", mode = "reconcile", queueTtlMs = 10000,
    timeoutMs = 200, luaDir, warnIntervalMs = 10000 } = {}) {
    if (!target || /[{}]/.test(target)) throw new Error(`target '${target}': must be non-empty without '{' or '}'`);
    if (!MODES.includes(mode)) throw new Error(`mode '${mode}': must be one of ${MODES.join(", ")}`);
    Object.assign(this, { target, url, mode, queueTtlMs, timeoutMs, warnIntervalMs });
    this.key = `bp:{${target}}:state`;
    this.scripts = loadScripts(luaDir);
    this.client = connect(url, timeoutMs);
    this.client.on("error", () => {});  // counted where a call fails
    this.lastWarn = null;
    this.counters = { admits: 0, defers: 0, rejects: 0, failOpens: 0, releases: 0,
      releaseErrors: 0, duplicateReleases: 0 };
  }

  // EVALSHA; on NOSCRIPT (restart, failover, flush) EVAL the text once, which
  // runs it and caches it on that node.
  async eval(name, args) {
    const s = this.scripts[name];
    const a = args.map(String);
    try {
      return await this.client.evalsha(s.sha, 1, this.key, ...a);
    } catch (e) {
      if (!String(e.message).startsWith("NOSCRIPT")) throw e;
      return await this.client.eval(s.text, 1, this.key, ...a);
    }
  }

  failOpen(why) {
    this.counters.failOpens++;
    const now = Date.now();
    if (this.lastWarn === null || now - this.lastWarn >= this.warnIntervalMs) {
      this.lastWarn = now;
      console.warn(`bp gate '${this.target}': failing open (${this.counters.failOpens} so far): ${why}`);
    }
    return { kind: "admit", ticket: null, failOpen: true, reason: why };
  }

  // {kind: "admit", ticket} | {kind: "defer", deltaMs, binding} |
  // {kind: "reject", reason}. tokens: the call's estimated tokens; maxTokens:
  // its completion bound (reservation mode); nowMs: tests only (0 = the
  // server's clock). Invalid input is a reject with INVALID_REQUEST, decided
  // here without a round trip.
  async admit(tenant, priority = 1, { requests = 1, tokens = 0, maxTokens = 0, nowMs = 0 } = {}) {
    if (!validTenant(tenant) || !Number.isSafeInteger(priority) || priority < 1 ||
        !isCount(requests) || !isCount(tokens) || !isCount(maxTokens)) {
      this.counters.rejects++;
      return { kind: "reject", reason: INVALID_REQUEST };
    }
    let reply;
    try {
      reply = await this.eval("admit", [tenant, priority, requests, tokens, maxTokens, this.mode,
        "none", this.queueTtlMs, nowMs]);
    } catch (e) {
      return this.failOpen(`${e.name}: ${e.message}`);
    }
    if (!Array.isArray(reply) || reply.length < 2) return this.failOpen(`admit script: unexpected reply ${reply}`);
    switch (reply[0]) {
      case "ADMIT":
        this.counters.admits++;
        return { kind: "admit", ticket: { id: String(reply[1]), requests, tokens, released: false }, failOpen: false };
      case "DEFER":
        this.counters.defers++;
        return { kind: "defer", deltaMs: Number(reply[1]), binding: reply[2] ?? "fair" };
      case "REJECT":
        this.counters.rejects++;
        return { kind: "reject", reason: String(reply[1]) };
      default:
        return this.failOpen(`admit script: unknown verdict ${reply[0]}`);
    }
  }

  // Corrects the admission by the usage the provider reported. upstream429:
  // {bound, retryAfterMs, remainingRequests, resetRequestsMs, remainingTokens,
  // resetTokensMs} (absent numbers: -1) when the provider refused the call.
  // Resolves true when applied, false when there was nothing to release (no
  // ticket, already released, unknown to the server) or the server was
  // unreachable (counted). A ticket is sent at most once, whatever happens.
  async release(ticket, actualTokens, { actualRequests, upstream429, nowMs = 0 } = {}) {
    if (!ticket || ticket.id === "0") return false;
    if (ticket.released) { this.counters.duplicateReleases++; return false; }
    const reqs = actualRequests ?? ticket.requests;
    if (!isCount(actualTokens) || !isCount(reqs)) {
      throw new Error(`release: actual costs must be integers >= 0, got requests=${reqs} tokens=${actualTokens}`);
    }
    ticket.released = true;
    const args = [ticket.id, reqs, actualTokens, nowMs];
    if (upstream429) {
      const u = upstream429;
      args.push("429", u.bound ?? "", num(u.retryAfterMs ?? -1), u.remainingRequests ?? -1,
        num(u.resetRequestsMs ?? -1), u.remainingTokens ?? -1, num(u.resetTokensMs ?? -1));
    }
    try {
      const applied = await this.eval("release", args);
      this.counters.releases++;
      return applied === 1;
    } catch {
      this.counters.releaseErrors++;
      return false;
    }
  }

  // Writes configuration fields (configure.lua); resolves whether the target
  // has caps. Rejects on a server error.
  async configure(fields, mode = "set") {
    const args = [mode];
    for (const [k, v] of Object.entries(fields)) args.push(k, String(v));
    return (await this.eval("configure", args)) === 1;
  }

  // state.lua's fields as {name: string | nested array}.
  async state() {
    const flat = await this.eval("state", ["state", "none"]);
    const out = {};
    for (let i = 0; i < flat.length; i += 2) out[flat[i]] = flat[i + 1];
    return out;
  }

  async close() { await this.client.quit().catch(() => this.client.disconnect()); }
}
