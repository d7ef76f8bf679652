import { existsSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, expect, test, vi } from "vitest";
import { loopdClient } from "./loopd-client.js";
import { killAllLoopd, spawnLoopd } from "./loopd-process.js";
import { runProgram } from "./run-program.js";

// Real processes, each compiling the sources at start: slow on a busy machine, so bounds, not measures, are generous.
vi.setConfig({ testTimeout: 150_000, hookTimeout: 150_000 });

/*
 * What the operator is told when loopd cannot start: real processes, each
 * given exactly the environment an operator would set.
 */
const scratch = mkdtempSync(path.join(tmpdir(), "loopd-startup-"));
const server = new URL(process.env.TEST_DATABASE_URL ?? "postgres://postgres@127.0.0.1:5432/test");

afterAll(async () => {
  await killAllLoopd();
  rmSync(scratch, { recursive: true, force: true });
});

/** Runs `src/main.ts` until it exits; what it printed and its exit code. */
const startAndExit = (env: Record<string, string>) =>
  runProgram("src/main.ts", { env: { DATA_DIR: path.join(scratch, "data"), PORT: "0", ...env }, timeoutMs: 25_000 });

const urlWith = (changes: { port?: string; pathname?: string; password?: string }) => {
  const url = new URL(server.toString());
  Object.assign(url, changes);
  return url.toString();
};

test("a DATABASE_URL naming a database that does not exist says so, without the password", async () => {
  const { code, output } = await startAndExit({
    DATABASE_URL: urlWith({ pathname: "/loopd_no_such_database", password: "hunter2secret" }),
  });
  expect(code).toBe(1);
  expect(output).toMatch(
    /^loopd cannot start: the database "loopd_no_such_database" does not exist on .*:\d+: create it/,
  );
  expect(output).not.toContain("hunter2secret");
  expect(output).not.toContain("Failed query");
});

test("a DATABASE_URL whose port is closed says the server cannot be reached", async () => {
  const { code, output } = await startAndExit({ DATABASE_URL: urlWith({ port: "1" }) });
  expect(code).toBe(1);
  expect(output).toMatch(/^loopd cannot start: cannot reach PostgreSQL at .*:1: connection refused/);
});

test("a provider chosen without its key stops the start with what to set", async () => {
  const openai = await startAndExit({ LLM_PROVIDER: "openai" });
  expect(openai.code).toBe(1);
  expect(openai.output).toMatch(
    /^loopd cannot start: LLM_PROVIDER is openai but OPENAI_API_KEY is not set \(or OPENAI_BASE_URL, for an OpenAI-compatible local server .*which needs no key\)/m,
  );
  const anthropic = await startAndExit({ LLM_PROVIDER: "anthropic", OPENAI_API_KEY: "fake-key" });
  expect(anthropic.code).toBe(1);
  expect(anthropic.output).toMatch(/^loopd cannot start: LLM_PROVIDER is anthropic but ANTHROPIC_API_KEY is not set/);
});

test("a missing WORKSPACE_DIR is created at start", async () => {
  const workspace = path.join(scratch, "not", "there", "yet");
  const loopd = await spawnLoopd({ env: { DATA_DIR: path.join(scratch, "data-ws"), WORKSPACE_DIR: workspace } });
  expect(existsSync(workspace)).toBe(true);
  loopd.child.kill("SIGTERM");
  expect(await loopd.exited).toEqual({ code: 0, signal: null });
});

test("every start-up failure is one line after one prefix: a PORT in use, found before the database is opened", async () => {
  const taken = createServer();
  await new Promise<void>((resolve) => taken.listen({ host: "127.0.0.1", port: 0 }, resolve));
  const port = (taken.address() as { port: number }).port;
  const dataDir = path.join(scratch, "data-port");
  const { code, output } = await startAndExit({ PORT: String(port), DATA_DIR: dataDir });
  await new Promise<void>((resolve) => taken.close(() => resolve()));
  expect(code).toBe(1);
  expect(output).toBe(
    `loopd cannot start: PORT ${port} is already in use on 127.0.0.1 (another loopd, or another server): stop that process or set PORT to a free port\n`,
  );
  expect(existsSync(dataDir)).toBe(false);
});

test("npm start reads .env from its folder (the environment wins over it); the mock provider's start warns of nothing", async () => {
  const folder = mkdtempSync(path.join(scratch, "dotenv-"));
  writeFileSync(
    path.join(folder, ".env"),
    `# as .env.example has it\nLLM_MODEL=model-from-dotenv\nDATA_DIR=${path.join(folder, "data")}\nPORT=1\nLOG_LEVEL=info\n`,
  );
  const loopd = await spawnLoopd({ env: {}, cwd: folder });
  const conversation = await loopdClient(() => loopd.url).createConversation({});
  expect(conversation).toMatchObject({ provider: "mock", model: "model-from-dotenv" });
  expect(existsSync(path.join(folder, "data"))).toBe(true);
  loopd.child.kill("SIGTERM");
  expect(await loopd.exited).toEqual({ code: 0, signal: null });
  const lines = loopd
    .output()
    .trim()
    .split("\n")
    .map((l) => JSON.parse(l) as { level: number; msg: string });
  expect(lines.filter((l) => l.level >= 40)).toEqual([]);
  expect(lines.filter((l) => /API_KEY/.test(l.msg))).toHaveLength(1);
});

test("a server gone idle after a burst collects the garbage its old generation grew by (IDLE_GC_MB), and says so at debug", async () => {
  const loopd = await spawnLoopd({
    env: { DATA_DIR: path.join(scratch, "data-gc"), LOG_LEVEL: "debug", IDLE_GC_MB: "1", HISTORY_CACHE_MB: "0" },
  });
  const client = loopdClient(() => loopd.url);
  const { id } = await client.createConversation({});
  // Strings this long are allocated in V8's old generation at once: a few messages grow it by megabytes, garbage once answered.
  for (let i = 0; i < 4; i++) await client.send(id, `${i} ${"x".repeat(400_000)}`);
  const said = () =>
    loopd
      .output()
      .split("\n")
      .find((l) => l.includes('"collected garbage while idle"'));
  const line = await new Promise<string | undefined>((resolve) => {
    const check = () => {
      const found = said();
      if (found) resolve(found);
    };
    loopd.child.stdout!.on("data", check);
    check();
    // Idle 300 ms after the last answer; a generous bound on a busy machine, not a measure.
    setTimeout(() => resolve(said()), 30_000).unref();
  });
  expect(line, loopd.output().slice(-3_000)).toBeDefined();
  const { oldSpaceUsedMbBefore, oldSpaceUsedMbAfter } = JSON.parse(line!) as {
    oldSpaceUsedMbBefore: number;
    oldSpaceUsedMbAfter: number;
  };
  expect(oldSpaceUsedMbBefore - oldSpaceUsedMbAfter).toBeGreaterThan(1);
  loopd.child.kill("SIGTERM");
  expect(await loopd.exited).toEqual({ code: 0, signal: null });
});
