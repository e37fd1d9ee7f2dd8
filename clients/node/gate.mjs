// The gate client for Node workers: admit before an API call, release after
// it (docs/protocol.md), over iovalkey (single server or cluster).
//
// Fail-open: when the server is unreachable, times out or answers an error,
// admit answers {kind: "admit", ticket: null, failOpen: true, cause}, counts
// it in counters.failOpens and in the cause's counter, and warns at most once
// per warnIntervalMs. The causes are the C++ client's (bp::FailOpenCauseName):
// "unreachable", "timed out", "target not configured", "server error".
// A transport failure opens the Gate's circuit breaker (breaker.mjs, the C++
// default of 1000 ms): for that long calls fail open at once, then one call
// probes. iovalkey reconnects in the background.
//
// An unconfigured target (its store lost its state) is re-seeded from
// declaredConfig when one is given: one configure.lua "seed" call, which
// writes only while the target is still unconfigured (racing workers write it
// once), then the admission is retried once. At most one attempt per
// reseedIntervalMs per Gate; one warning per process and target that hot
// changes made since the declared configuration was written are lost
// (docs/store-restart.md). One Gate per target and process; calls may overlap.
import { createHash } from "node:crypto";
import { readFileSync, existsSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import Valkey from "iovalkey";
import { CircuitBreaker } from "./breaker.mjs";
import { readDeclaredConfig } from "./declared.mjs";
import { rateLimitsFromHeaders } from "./headers.mjs";
import { INVALID_REQUEST, TENANT_RULE, isCount, validRequest, validTenant } from "./rules.mjs";

export { CircuitBreaker, INVALID_REQUEST, TENANT_RULE, rateLimitsFromHeaders, readDeclaredConfig, validTenant };
// The protocol version this client implements; prelude.lua owns it.
export const PROTOCOL_VERSION = 1;
// bp::FailOpenCauseName's names, and the counter of each.
export const CAUSE_COUNTERS = { "unreachable": "failOpensUnreachable", "timed out": "failOpensTimedOut",
  "target not configured": "failOpensUnconfigured", "server error": "failOpensServerError" };
// admit.lua's error for a target without caps.
const UNCONFIGURED_REPLY = "bp: target not configured";
const reseedWarned = new Set();  // targets warned about in this process
const MODES = ["estimate", "reconcile", "reservation"];
const SCRIPT_NAMES = ["admit", "release", "configure", "state", "reset_buckets"];


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

// The list of the scripts sent as several files, beside the scripts.
const PARTS_FILE = "parts.txt";

// {script file: [its files in order]} from the text of parts.txt: per line
// not blank and not starting with '#', file names separated by whitespace,
// the first naming the script. Scripts not listed are absent.
export function parseParts(text) {
  const out = {};
  for (const line of text.split(/\r?\n/)) {
    const files = line.split(/\s+/).filter(Boolean);
    if (files.length >= 2 && !line.startsWith("#")) out[files[0]] = files;
  }
  return out;
}

// {name: {text, sha}}: each script as the server receives it (a comment line
// naming it, prelude.lua, the script's files: <name>.lua alone, or the files
// parts.txt lists for it, in order; the C++ build's text, byte for byte).
// Throws when prelude.lua names no protocol version or another one, or when
// parts.txt is missing.
export function loadScripts(luaDir = defaultLuaDir()) {
  const preludePath = join(luaDir, "prelude.lua");
  const prelude = readFileSync(preludePath, "utf8");
  const m = /^local PROTOCOL_VERSION = (\d+)/m.exec(prelude);
  const found = m ? Number(m[1]) : null;
  if (found !== PROTOCOL_VERSION) {
    throw new Error(`${preludePath}: protocol version ${m ? found : "missing"}, this client ` +
      `implements ${PROTOCOL_VERSION} (docs/protocol.md)`);
  }
  const parts = parseParts(readFileSync(join(luaDir, PARTS_FILE), "utf8"));
  const out = {};
  for (const name of SCRIPT_NAMES) {
    const files = parts[`${name}.lua`] ?? [`${name}.lua`];
    const body = files.map((f) => readFileSync(join(luaDir, f), "utf8")).join("");
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
  // each command (a lost server costs a caller at most about that long, then
  // the breaker answers at once for breakerCoolOffMs; 0: no breaker).
  // declaredConfig: the target's configuration to re-seed it with (an object,
  // a JSON text or a file path, as `bpctl export` prints it; absent: an
  // unconfigured target fails open); throws here when it is invalid. clock:
  // ms, for the intervals (tests move it).
  constructor(target, { url = "redis://127.0.0.1:6379", mode = "reconcile", queueTtlMs = 10000,
    timeoutMs = 200, luaDir, warnIntervalMs = 10000, declaredConfig, breakerCoolOffMs = 1000,
    reseedIntervalMs = 1000, clock = () => performance.now() } = {}) {
    if (!target || /[{}]/.test(target)) throw new Error(`target '${target}': must be non-empty without '{' or '}'`);
    if (!MODES.includes(mode)) throw new Error(`mode '${mode}': must be one of ${MODES.join(", ")}`);
    Object.assign(this, { target, url, mode, queueTtlMs, timeoutMs, warnIntervalMs, reseedIntervalMs, clock });
    this.key = `bp:{${target}}:state`;
    this.scripts = loadScripts(luaDir);
    this.seed = declaredConfig === undefined || declaredConfig === null ? null : readDeclaredConfig(declaredConfig);
    this.breaker = new CircuitBreaker(breakerCoolOffMs, clock);
    this.client = connect(url, timeoutMs);
    this.client.on("error", () => {});  // counted where a call fails
    this.lastWarn = null;
    this.lastReseed = null;
    this.transportCause = "unreachable";
    this.counters = { admits: 0, defers: 0, rejects: 0, failOpens: 0, releases: 0,
      releaseErrors: 0, duplicateReleases: 0, breakerSkips: 0, reseeds: 0,
      ...Object.fromEntries(Object.values(CAUSE_COUNTERS).map((c) => [c, 0])) };
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

  // {reply} or {cause, reason}: one script call through the breaker. An error
  // reply is an answer (the breaker closes).
  async call(name, args) {
    if (!this.breaker.allow()) {
      this.counters.breakerSkips++;
      const what = this.transportCause === "timed out" ? "timed out" : "found it unreachable";
      return { cause: this.transportCause, reason: `circuit breaker open: a gate call to valkey ${what}; ` +
        `calls fail open without waiting for ${this.breaker.coolOffMs} ms, then one probe` };
    }
    try {
      const reply = await this.eval(name, args);
      this.breaker.onSuccess();
      return { reply };
    } catch (e) {
      const reason = `${e.name}: ${e.message}`;
      if (e.name === "ReplyError") {
        this.breaker.onSuccess();
        return { cause: reason.includes(UNCONFIGURED_REPLY) ? "target not configured" : "server error", reason };
      }
      this.transportCause = /timed? ?out/i.test(e.message) ? "timed out" : "unreachable";
      this.breaker.onFailure();
      return { cause: this.transportCause, reason };
    }
  }

  failOpen(cause, why) {
    this.counters.failOpens++;
    this.counters[CAUSE_COUNTERS[cause]]++;
    const now = this.clock();
    if (this.lastWarn === null || now - this.lastWarn >= this.warnIntervalMs) {
      this.lastWarn = now;
      console.warn(`bp gate '${this.target}': failing open (${this.counters.failOpens} so far, ${cause}): ${why}`);
    }
    return { kind: "admit", ticket: null, failOpen: true, cause, reason: why, startInMs: 0 };
  }

  // null when the seed call was made (by this Gate or a racing one), else why not.
  async reseed(nowMs) {
    if (!this.seed) return "target not configured and no declared configuration to re-seed it";
    const now = this.clock();
    if (this.lastReseed !== null && now - this.lastReseed < this.reseedIntervalMs) {
      return `target not configured; the last re-seed attempt was within ${this.reseedIntervalMs} ms`;
    }
    this.lastReseed = now;
    const r = await this.call("configure", ["seed", nowMs, ...this.seed]);
    if (r.cause) return `target not configured; re-seed failed: ${r.reason}`;
    if (r.reply === 1) {
      this.counters.reseeds++;
      if (!reseedWarned.has(this.target)) {
        reseedWarned.add(this.target);
        console.warn(`bp gate '${this.target}': the target was unconfigured (its store lost its state: ` +
          "a restart without persistence, a failover or a flush); re-seeded it from the declared " +
          "configuration, with empty buckets. Hot changes made since that configuration was written " +
          "are lost; keep it current with `bpctl export` after each change (docs/store-restart.md)");
      }
    }
    return null;
  }

  // {kind: "admit", ticket, startInMs} | {kind: "defer", deltaMs, binding} |
  // {kind: "reject", reason}. tokens: the call's estimated tokens; maxTokens:
  // its completion bound (reservation mode); nowMs: tests only (0 = the
  // server's clock). aheadMs: the longest wait before calling the provider
  // that the caller will keep (0 = never admitted ahead): a call only the
  // bucket's refill holds back, at the head of the gate's L1 line, whose cost
  // fits in the bucket and whose refill comes within min(aheadMs, four
  // refills of its own cost) is admitted at once with
  // startInMs > 0, and the caller must not call the provider before
  // startInMs from now (docs/clients.md, "Admit ahead"); else startInMs is 0.
  // Invalid input is a reject with INVALID_REQUEST, decided here without a
  // round trip.
  async admit(tenant, priority = 1, { requests = 1, tokens = 0, maxTokens = 0, nowMs = 0, aheadMs = 0 } = {}) {
    if (!validRequest(tenant, priority, requests, tokens, maxTokens, aheadMs)) {
      this.counters.rejects++;
      return { kind: "reject", reason: INVALID_REQUEST };
    }
    const args = [tenant, priority, requests, tokens, maxTokens, this.mode, "none", this.queueTtlMs, nowMs];
    if (aheadMs > 0) args.push(aheadMs);  // ARGV[10]; absent keeps the reply ["ADMIT", ticket]
    let r = await this.call("admit", args);
    if (r.cause === "target not configured") {
      const why = await this.reseed(nowMs);
      if (why !== null) return this.failOpen(r.cause, why);
      r = await this.call("admit", args);  // once
    }
    if (r.cause) return this.failOpen(r.cause, r.reason);
    const reply = r.reply;
    if (!Array.isArray(reply) || reply.length < 2) return this.failOpen("server error", `admit script: unexpected reply ${reply}`);
    switch (reply[0]) {
      case "ADMIT":
        this.counters.admits++;
        return { kind: "admit", ticket: { id: String(reply[1]), requests, tokens, released: false }, failOpen: false,
          startInMs: reply.length > 2 ? Number(reply[2]) : 0 };
      case "DEFER":
        this.counters.defers++;
        return { kind: "defer", deltaMs: Number(reply[1]), binding: reply[2] ?? "fair" };
      case "REJECT":
        this.counters.rejects++;
        return { kind: "reject", reason: String(reply[1]) };
      default:
        return this.failOpen("server error", `admit script: unknown verdict ${reply[0]}`);
    }
  }

  // Corrects the admission by the usage the provider reported. upstream429:
  // {bound, retryAfterMs, remainingRequests, resetRequestsMs, remainingTokens,
  // resetTokensMs} (absent numbers: -1) when the provider refused the call.
  // rateLimits: {remainingRequests, resetRequestsMs, remainingTokens,
  // resetTokensMs} of a served call (reset: ms until fully restored; ignored
  // with upstream429): with a reset > 0 it feeds the adaptive caps' header rule.
  // Resolves true when applied, false when there was nothing to release (no
  // ticket, unknown to the server) or the server was unreachable or the
  // breaker open (counted in releaseErrors; the ticket is left to expire). A
  // ticket is sent at most once, whatever happens: a second release of it is
  // refused here (counted in duplicateReleases). Throws for costs that are
  // not integers >= 0.
  async release(ticket, actualTokens, { actualRequests, upstream429, rateLimits, nowMs = 0 } = {}) {
    if (!ticket || ticket.id === "0") return false;
    const reqs = actualRequests ?? ticket.requests;
    if (!isCount(actualTokens) || !isCount(reqs)) {
      throw new Error(`release: actual costs must be integers >= 0, got requests=${reqs} tokens=${actualTokens}`);
    }
    if (ticket.released) { this.counters.duplicateReleases++; return false; }
    ticket.released = true;
    const args = [ticket.id, reqs, actualTokens, nowMs];
    if (upstream429) {
      const u = upstream429;
      args.push("429", u.bound ?? "", num(u.retryAfterMs ?? -1), u.remainingRequests ?? -1,
        num(u.resetRequestsMs ?? -1), u.remainingTokens ?? -1, num(u.resetTokensMs ?? -1));
    } else if (rateLimits && ((rateLimits.resetRequestsMs ?? -1) > 0 || (rateLimits.resetTokensMs ?? -1) > 0)) {
      const h = rateLimits;
      args.push("ok", "", -1, h.remainingRequests ?? -1, num(h.resetRequestsMs ?? -1),
        h.remainingTokens ?? -1, num(h.resetTokensMs ?? -1));
    }
    const r = await this.call("release", args);
    if (r.cause) { this.counters.releaseErrors++; return false; }
    this.counters.releases++;
    return r.reply === 1;
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
