// A real Valkey/Redis server on a free loopback port for the tests, found as
// scripts/lib/servers.sh's bp_server_bin finds it.
import { spawn, execFileSync } from "node:child_process";
import { accessSync, constants } from "node:fs";
import { createServer, connect } from "node:net";
import { homedir } from "node:os";
import { join } from "node:path";

export function serverBin() {
  const cached = join(process.env.XDG_CACHE_HOME || join(homedir(), ".cache"), "backpressure/valkey-9/bin/valkey-server");
  try { accessSync(cached, constants.X_OK); return cached; } catch {}
  for (const name of ["valkey-server", "redis-server"]) {
    try { return execFileSync("sh", ["-c", `command -v ${name}`]).toString().trim(); } catch {}
  }
  throw new Error("neither valkey-server nor redis-server found (run scripts/setup.sh)");
}

export function freePort() {
  return new Promise((res) => { const s = createServer().listen(0, "127.0.0.1", () => { const p = s.address().port; s.close(() => res(p)); }); });
}

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

// A cluster node also listens on its bus port, port + 10000, so Valkey
// refuses to start a cluster node on a port above 55535.
const MAX_CLUSTER_PORT = 65535 - 10000;
function portIsFree(port) {
  return new Promise((res) => {
    const s = createServer();
    s.once("error", () => res(false));
    s.listen(port, "127.0.0.1", () => s.close(() => res(true)));
  });
}
async function freeClusterPort() {
  for (let i = 0; i < 500; i++) {
    const p = await freePort();
    if (p <= MAX_CLUSTER_PORT && (await portIsFree(p + 10000))) return p;
  }
  throw new Error(`no free port <= ${MAX_CLUSTER_PORT} with its cluster bus port free`);
}

export class Server {
  static async create(extra = []) {
    const s = new Server();
    s.port = extra.includes("--cluster-enabled") ? await freeClusterPort() : await freePort();
    s.extra = extra;
    await s.start();
    return s;
  }
  get url() { return `redis://127.0.0.1:${this.port}`; }
  async start() {
    this.proc = spawn(serverBin(), ["--port", String(this.port), "--bind", "127.0.0.1", "--save", "",
      "--appendonly", "no", "--daemonize", "no", "--loglevel", "warning", ...this.extra], { stdio: "ignore" });
    for (let i = 0; i < 200; i++) {
      const ok = await new Promise((res) => { const c = connect(this.port, "127.0.0.1"); c.on("connect", () => { c.end(); res(true); }); c.on("error", () => res(false)); });
      if (ok) return;
      await sleep(20);
    }
    throw new Error(`server did not listen on ${this.port}`);
  }
  // SIGKILL: no shutdown, no save, connections reset.
  async kill() {
    if (!this.proc || this.proc.exitCode !== null) return;
    const done = new Promise((r) => this.proc.once("exit", r));
    this.proc.kill("SIGKILL");
    await done;
  }
  async stop() {
    if (!this.proc || this.proc.exitCode !== null) return;
    const done = new Promise((r) => this.proc.once("exit", r));
    this.proc.kill("SIGTERM");
    await done;
  }
}
