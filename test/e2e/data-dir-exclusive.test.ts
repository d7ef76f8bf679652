import { existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, expect, test, vi } from "vitest";
import { LOCK_FILE } from "../../src/store/data-dir-lock.js";
import { openDatabase } from "../../src/store/db.js";
import { loopdClient } from "./loopd-client.js";
import { killAllLoopd, killProcess, spawnLoopd, type LoopdProcess } from "./loopd-process.js";
import { startHolder } from "../support/helpers/data-dir-holder.js";
import { runProgram } from "./run-program.js";

// Real processes, each compiling the sources at start: slow on a busy machine, so bounds, not measures, are generous.
vi.setConfig({ testTimeout: 150_000, hookTimeout: 150_000 });

/*
 * Two processes on one embedded database corrupt it for good. Every program
 * that opens DATA_DIR (the server, replay, db:migrate) takes it alone; a
 * second opener is refused with one line; a command that only reads goes
 * through the server's API instead. The scenarios run in order on one folder.
 */
const scratch = mkdtempSync(path.join(tmpdir(), "loopd-exclusive-"));
const dataDir = path.join(scratch, "data");
let server: LoopdProcess;
const client = loopdClient(() => server.url);
afterAll(async () => {
  await killAllLoopd();
  rmSync(scratch, { recursive: true, force: true });
});

let conversationId: string;
let runId: string;
/** What the first server had saved: what every later one must still show. */
let history: unknown[];

const refusal = (pid: number) =>
  new RegExp(
    `the embedded database in ${dataDir.replace(/[.*+?^${}()|[\]\\/]/g, "\\$&")} is in use by process ${pid} \\(the loopd server on http://127\\.0\\.0\\.1:\\d+, since [^)]+\\); only one process may open it`,
  );

test("the server holds DATA_DIR: its lock names it and where it answers", async () => {
  server = await spawnLoopd({ env: { DATA_DIR: dataDir } });
  const conversation = await client.createConversation({ provider: "mock" });
  conversationId = conversation.id;
  const sent = await client.send(conversationId, "What is 12*7?");
  runId = sent.run.id;
  expect(sent.output_text).toBe("12*7 = 84");
  history = (await client.messages(conversationId)).map((m: any) => ({ seq: m.seq, content: m.content }));
  expect(history).toHaveLength(4);
  expect(JSON.parse(readFileSync(path.join(dataDir, LOCK_FILE), "utf8"))).toMatchObject({
    pid: server.pid,
    program: "the loopd server",
    url: server.url,
  });
});

test("a second server on the same DATA_DIR is refused with one line, and the first goes on", async () => {
  // At the default log level: nothing is logged before the refusal.
  const second = await runProgram("src/main.ts", { env: { DATA_DIR: dataDir, PORT: "0", LOG_LEVEL: "info" } });
  expect(second.code).toBe(1);
  expect(second.output.trim().split("\n")).toHaveLength(1);
  expect(second.output).toMatch(new RegExp(`^loopd cannot start: ${refusal(server.pid).source}`));
  expect((await client.messages(conversationId)).map((m: any) => ({ seq: m.seq, content: m.content }))).toEqual(
    history,
  );
});

test("db:migrate on a held DATA_DIR is refused with the same line", async () => {
  const migrate = await runProgram("src/cli/migrate.ts", { env: { DATA_DIR: dataDir } });
  expect(migrate.code).toBe(1);
  expect(migrate.output).toMatch(new RegExp(`^db:migrate cannot run: ${refusal(server.pid).source}`));
});

test("replay of a run while the server runs reads it through the server's API", async () => {
  const out = path.join(scratch, "replay.json");
  const replay = await runProgram("src/cli/replay.ts", { args: [runId, "--out", out], env: { DATA_DIR: dataDir } });
  expect(replay.stderr).toBe("");
  expect(replay.code).toBe(0);
  expect(replay.stdout).toContain(
    `the loopd server at ${server.url} holds ${dataDir}: reading the run through its API`,
  );
  expect(replay.stdout).toMatch(/step +1 +same_call +calculate\(\{"expression":"12\*7"\}\)/);
  expect(replay.stdout).toMatch(/step +2 +same_text +text "12\*7 = 84"/);
  expect(JSON.parse(readFileSync(out, "utf8"))).toMatchObject({
    run_id: runId,
    summary: { same_call: 1, same_text: 1 },
  });
});

test("replay on a DATA_DIR held by a process that serves no API is refused with the clear line", async () => {
  const heldDir = path.join(scratch, "held");
  await (await openDatabase({ dataDir: heldDir })).close();
  const holder = startHolder("hold", heldDir);
  expect(await holder.said()).toBe("ready");
  expect(await holder.said()).toBe("held");
  const replay = await runProgram("src/cli/replay.ts", { args: [runId], env: { DATA_DIR: heldDir } });
  await holder.end();
  expect(replay.code).toBe(1);
  expect(replay.output).toMatch(
    new RegExp(
      `^replay cannot run: the embedded database in ${heldDir.replace(/[/.]/g, "\\$&")} is in use by process ${holder.child.pid} \\(a test holder, since `,
    ),
  );
});

test("after a stop the lock is gone and the data is intact; after a kill -9 the stale lock is taken over, the data intact", async () => {
  server.child.kill("SIGTERM");
  expect(await server.exited).toEqual({ code: 0, signal: null });
  expect(existsSync(path.join(dataDir, LOCK_FILE))).toBe(false);

  server = await spawnLoopd({ env: { DATA_DIR: dataDir } });
  expect((await client.messages(conversationId)).map((m: any) => ({ seq: m.seq, content: m.content }))).toEqual(
    history,
  );
  const killed = server.pid;
  await killProcess(server);
  expect(JSON.parse(readFileSync(path.join(dataDir, LOCK_FILE), "utf8"))).toMatchObject({ pid: killed });

  server = await spawnLoopd({ env: { DATA_DIR: dataDir } });
  expect(JSON.parse(readFileSync(path.join(dataDir, LOCK_FILE), "utf8"))).toMatchObject({ pid: server.pid });
  expect((await client.messages(conversationId)).map((m: any) => ({ seq: m.seq, content: m.content }))).toEqual(
    history,
  );
  expect((await client.send(conversationId, "What is 2^10?")).output_text).toBe("2^10 = 1024");
});
