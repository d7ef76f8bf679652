#!/usr/bin/env node
// npm run postman: the Postman collection, run by newman against a throw-away
// loopd (mock provider, embedded database in a temporary folder, a free port,
// API keys on: the collection makes its key with this run's ADMIN_TOKEN).
// Exits non-zero when a request fails or a test in the collection does.
//
//   npm run postman                                    start a server, run, stop it
//   npm run postman -- --url http://127.0.0.1:3000     against a server already running (LOOPD_ADMIN_TOKEN: its ADMIN_TOKEN, if keys are on)
//   npm run postman -- --folder trace                  other folders than the default ones
/* global fetch */
import { spawn } from "node:child_process";
import { randomBytes } from "node:crypto";
import console from "node:console";
import { mkdtempSync, rmSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import path from "node:path";
import process from "node:process";
import { clearTimeout, setTimeout } from "node:timers";
import { URL, fileURLToPath } from "node:url";
import { parseArgs } from "node:util";
import newman from "newman";

const root = fileURLToPath(new URL("..", import.meta.url));
// "trace" waits for GET …/runs/:run_id/trace; add it here when that route lands.
const DEFAULT_FOLDERS = ["walkthrough", "approvals", "agents", "trace", "errors", "mcp", "a2a", "openai"];

const { values: args } = parseArgs({
  options: { url: { type: "string" }, folder: { type: "string", multiple: true } },
});
const folders = args.folder ?? DEFAULT_FOLDERS;

/** A port nobody listens on now. */
const freePort = () =>
  new Promise((resolve, reject) => {
    const probe = createServer().once("error", reject);
    probe.listen(0, "127.0.0.1", () => {
      const { port } = probe.address();
      probe.close(() => resolve(port));
    });
  });

async function waitForHealth(url, server, timeoutMs) {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (server.exitCode !== null) throw new Error(`loopd exited with status ${server.exitCode} before it was ready`);
    const ok = await fetch(`${url}/healthz`).then(
      (r) => r.ok,
      () => false,
    );
    if (ok) return;
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
  throw new Error(`loopd did not answer ${url}/healthz within ${timeoutMs / 1000} s`);
}

/** This run's admin token: the collection makes its API key with it. */
const adminToken = randomBytes(24).toString("hex");

/** loopd from the sources (no build needed), offline: mock provider, no model keys, no DATABASE_URL; API keys on. */
async function startLoopd(dir) {
  const port = await freePort();
  const server = spawn(process.execPath, ["--import", "tsx", "src/main.ts"], {
    cwd: root,
    env: {
      ...process.env,
      HOST: "127.0.0.1",
      PORT: String(port),
      DATA_DIR: path.join(dir, "data"),
      WORKSPACE_DIR: path.join(dir, "workspace"),
      DATABASE_URL: "",
      LLM_PROVIDER: "mock",
      // Keys are on below: the mock is offered only when said so.
      MOCK_PROVIDER: "true",
      LLM_MODEL: "",
      ANTHROPIC_API_KEY: "",
      OPENAI_API_KEY: "",
      LOG_LEVEL: "warn",
      // With keys on, as on a network: the collection makes its key with the admin token first.
      API_KEYS_REQUIRED: "true",
      ADMIN_TOKEN: adminToken,
    },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let log = "";
  const keep = (chunk) => (log = (log + chunk).slice(-20_000));
  server.stdout.on("data", keep);
  server.stderr.on("data", keep);
  const url = `http://127.0.0.1:${port}`;
  try {
    await waitForHealth(url, server, 30_000);
  } catch (err) {
    server.kill("SIGKILL");
    throw new Error(`${err.message}\n${log}`, { cause: err });
  }
  return { url, server, log: () => log };
}

async function stopLoopd(server) {
  if (server.exitCode !== null) return;
  const exited = new Promise((resolve) => server.once("exit", resolve));
  server.kill("SIGTERM");
  const killed = setTimeout(() => server.kill("SIGKILL"), 15_000);
  await exited;
  clearTimeout(killed);
}

const runNewman = (baseUrl) =>
  new Promise((resolve, reject) => {
    newman.run(
      {
        collection: path.join(root, "postman/loopd.postman_collection.json"),
        environment: path.join(root, "postman/loopd.postman_environment.json"),
        envVar: [
          { key: "baseUrl", value: baseUrl },
          { key: "adminToken", value: args.url ? (process.env.LOOPD_ADMIN_TOKEN ?? "") : adminToken },
        ],
        folder: folders,
        reporters: ["cli"],
        timeoutRequest: 30_000,
      },
      (err, summary) => (err ? reject(err) : resolve(summary)),
    );
  });

const started = Date.now();
let loopd = null;
const dir = args.url ? null : mkdtempSync(path.join(tmpdir(), "loopd-postman-"));
// Stopped from outside (CI's timeout, Ctrl-C): leave no server behind.
for (const signal of ["SIGINT", "SIGTERM"]) {
  process.once(signal, () => {
    loopd?.server.kill("SIGKILL");
    if (dir) rmSync(dir, { recursive: true, force: true });
    process.exit(1);
  });
}
let failed = true;
try {
  loopd = args.url ? null : await startLoopd(dir);
  const summary = await runNewman(args.url ?? loopd.url);
  const failures = summary.run.failures.length;
  failed = failures > 0 || Boolean(summary.run.error);
  if (failed && loopd) console.error(`loopd's log:\n${loopd.log()}`);
  console.log(
    `postman: ${failed ? `FAILED (${failures} failures)` : "passed"}, folders ${folders.join(", ")}, in ${((Date.now() - started) / 1000).toFixed(1)} s`,
  );
} catch (err) {
  console.error(`postman: ${err instanceof Error ? err.message : err}`);
} finally {
  if (loopd) await stopLoopd(loopd.server);
  if (dir) rmSync(dir, { recursive: true, force: true });
}
process.exit(failed ? 1 : 0);
