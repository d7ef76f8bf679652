import { spawn } from "node:child_process";
import { existsSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, expect, test, vi } from "vitest";
import { killAllLoopd, spawnLoopd } from "./loopd-process.js";

// Real processes, each compiling the sources at start: slow on a busy machine, so bounds, not measures, are generous.
vi.setConfig({ testTimeout: 150_000, hookTimeout: 150_000 });

/*
 * What the operator is told when loopd cannot start: real processes, each
 * given exactly the environment an operator would set.
 */
const repoRoot = fileURLToPath(new URL("../..", import.meta.url));
const scratch = mkdtempSync(path.join(tmpdir(), "loopd-startup-"));
const server = new URL(process.env.TEST_DATABASE_URL ?? "postgres://postgres@127.0.0.1:5432/test");

afterAll(async () => {
  await killAllLoopd();
  rmSync(scratch, { recursive: true, force: true });
});

/** Runs `src/main.ts` until it exits; what it printed and its exit code. */
function startAndExit(env: Record<string, string>): Promise<{ code: number | null; output: string }> {
  const child = spawn(process.execPath, ["--import", "tsx", "src/main.ts"], {
    cwd: repoRoot,
    env: { PATH: process.env.PATH ?? "", HOME: process.env.HOME ?? "", DATA_DIR: path.join(scratch, "data"), PORT: "0", LOG_LEVEL: "warn", ...env },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let output = "";
  child.stdout.on("data", (c: Buffer) => (output += c.toString()));
  child.stderr.on("data", (c: Buffer) => (output += c.toString()));
  const timer = setTimeout(() => child.kill("SIGKILL"), 25_000);
  return new Promise((resolve) =>
    child.once("exit", (code) => {
      clearTimeout(timer);
      resolve({ code, output });
    }),
  );
}

const urlWith = (changes: { port?: string; pathname?: string; password?: string }) => {
  const url = new URL(server.toString());
  Object.assign(url, changes);
  return url.toString();
};

test("a DATABASE_URL naming a database that does not exist says so, without the password", async () => {
  const { code, output } = await startAndExit({ DATABASE_URL: urlWith({ pathname: "/loopd_no_such_database", password: "hunter2secret" }) });
  expect(code).toBe(1);
  expect(output).toMatch(/the database "loopd_no_such_database" does not exist on .*:\d+: create it/);
  expect(output).not.toContain("hunter2secret");
  expect(output).not.toContain("Failed query");
});

test("a DATABASE_URL whose port is closed says the server cannot be reached", async () => {
  const { code, output } = await startAndExit({ DATABASE_URL: urlWith({ port: "1" }) });
  expect(code).toBe(1);
  expect(output).toMatch(/cannot reach PostgreSQL at .*:1: connection refused/);
});

test("a provider chosen without its key stops the start with what to set", async () => {
  const openai = await startAndExit({ LLM_PROVIDER: "openai" });
  expect(openai.code).toBe(1);
  expect(openai.output).toMatch(/^loopd cannot start: LLM_PROVIDER is openai but OPENAI_API_KEY is not set \(or OPENAI_BASE_URL, for an OpenAI-compatible local server .*which needs no key\)/m);
  const anthropic = await startAndExit({ LLM_PROVIDER: "anthropic", OPENAI_API_KEY: "fake-key" });
  expect(anthropic.code).toBe(1);
  expect(anthropic.output).toContain("LLM_PROVIDER is anthropic but ANTHROPIC_API_KEY is not set");
});

test("a missing WORKSPACE_DIR is created at start", async () => {
  const workspace = path.join(scratch, "not", "there", "yet");
  const loopd = await spawnLoopd({ env: { DATA_DIR: path.join(scratch, "data-ws"), WORKSPACE_DIR: workspace } });
  expect(existsSync(workspace)).toBe(true);
  loopd.child.kill("SIGTERM");
  expect(await loopd.exited).toEqual({ code: 0, signal: null });
});
