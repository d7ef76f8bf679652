import { spawn, type ChildProcess } from "node:child_process";
import { chownSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { createServer, connect } from "node:net";
import { tmpdir, userInfo } from "node:os";
import path from "node:path";

/** Debian's pgbouncer (CI installs it: `.ci/run`). */
export const PGBOUNCER = process.env.PGBOUNCER_BIN ?? "/usr/sbin/pgbouncer";

export interface Pgbouncer {
  port: number;
  /** The running pooler's process (to read its CPU); null while it is stopped. */
  pid(): number | null;
  /** `serverUrl` with its host and port replaced by this pooler's. */
  urlOf(serverUrl: string): string;
  /** Stops the pooler (every client connection drops); `start` brings it back on the same port. */
  stop(): Promise<void>;
  start(): Promise<void>;
  close(): Promise<void>;
}

/**
 * A pgbouncer of the test file's own, in transaction mode (what Supabase,
 * Neon and RDS Proxy offer), in front of the Postgres server of
 * `serverUrl`, on a free port, with a generated ini and no authentication
 * of its own (the server's trust applies). Run as `nobody` when the tests
 * run as root, which pgbouncer refuses.
 */
export async function startPgbouncer(
  serverUrl: string,
  { poolSize = 8, mode = "transaction" }: { poolSize?: number; mode?: "transaction" | "session" } = {},
): Promise<Pgbouncer> {
  const server = new URL(serverUrl);
  const dir = mkdtempSync(path.join(tmpdir(), "loopd-pgbouncer-"));
  const user = decodeURIComponent(server.username || userInfo().username);
  const port = await freePort();
  const asRoot = process.getuid?.() === 0;
  writeFileSync(path.join(dir, "userlist.txt"), `"${user}" ""\n`);
  writeFileSync(
    path.join(dir, "pgbouncer.ini"),
    [
      "[databases]",
      `* = host=${server.hostname} port=${server.port || 5432}`,
      "[pgbouncer]",
      "listen_addr = 127.0.0.1",
      `listen_port = ${port}`,
      "unix_socket_dir =",
      "auth_type = trust",
      `auth_file = ${path.join(dir, "userlist.txt")}`,
      `pool_mode = ${mode}`,
      `default_pool_size = ${poolSize}`,
      "max_client_conn = 500",
      // What node-postgres sends at every connection; pgbouncer refuses any other startup parameter.
      "ignore_startup_parameters = extra_float_digits",
      `logfile = ${path.join(dir, "pgbouncer.log")}`,
      `pidfile = ${path.join(dir, "pgbouncer.pid")}`,
      "server_reset_query =",
      "",
    ].join("\n"),
  );
  if (asRoot) chownSync(dir, 65534, 65534);
  let child: ChildProcess | null = null;
  const start = async () => {
    const c = spawn(PGBOUNCER, [...(asRoot ? ["-u", "nobody"] : []), path.join(dir, "pgbouncer.ini")], {
      stdio: ["ignore", "ignore", "pipe"],
    });
    let stderr = "";
    c.stderr!.on("data", (d: Buffer) => (stderr += d.toString()));
    const exited = new Promise<never>((_, reject) =>
      c.once("exit", (code) => reject(new Error(`pgbouncer exited (${code}): ${stderr}`))),
    );
    exited.catch(() => {});
    child = c;
    await Promise.race([waitForPort(port), exited]);
  };
  const stop = async () => {
    const c = child;
    child = null;
    if (!c || c.exitCode !== null) return;
    const gone = new Promise<void>((resolve) => c.once("exit", () => resolve()));
    // Immediate shutdown: every client connection drops, a query in flight with it.
    c.kill("SIGTERM");
    await gone;
  };
  await start();
  return {
    port,
    pid: () => child?.pid ?? null,
    urlOf(url) {
      const u = new URL(url);
      u.hostname = "127.0.0.1";
      u.port = String(port);
      return u.toString();
    },
    stop,
    start,
    async close() {
      await stop();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const probe = createServer();
    probe.once("error", reject);
    probe.listen(0, "127.0.0.1", () => {
      const { port } = probe.address() as { port: number };
      probe.close(() => resolve(port));
    });
  });
}

/** Resolves once something accepts connections on `port` (at most 10 s). */
async function waitForPort(port: number): Promise<void> {
  const deadline = Date.now() + 10_000;
  for (;;) {
    const ok = await new Promise<boolean>((resolve) => {
      const socket = connect(port, "127.0.0.1");
      socket.once("connect", () => {
        socket.destroy();
        resolve(true);
      });
      socket.once("error", () => resolve(false));
    });
    if (ok) return;
    if (Date.now() > deadline) throw new Error(`pgbouncer did not listen on ${port} within 10 s`);
    await new Promise((r) => setTimeout(r, 50));
  }
}
