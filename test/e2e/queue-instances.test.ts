import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, beforeAll, expect, test, vi } from "vitest";
import { startFakeLlm, type FakeLlm } from "../support/fake-llm/server.js";
import { testDatabaseKind } from "../support/helpers/test-database.js";
import { createProcessDatabase } from "./process-database.js";
import { expectCompleteEventLog, loopdClient, unansweredToolCalls } from "./loopd-client.js";
import { killAllLoopd, killProcess, spawnLoopd, type LoopdProcess } from "./loopd-process.js";

vi.setConfig({ testTimeout: 150_000, hookTimeout: 150_000 });

/*
 * A queued run outlives the process that held the run ahead of it. On
 * Postgres two processes share the database: the run ahead executes in the
 * first, the message is queued through the second, the first is killed
 * (SIGKILL), and the second takes the run over and then starts the queued
 * one. On the embedded database one process is killed and started again.
 */

let llm: FakeLlm;
let database: Awaited<ReturnType<typeof createProcessDatabase>> | undefined;
let workspaceDir: string;
let env: Record<string, string>;

beforeAll(async () => {
  llm = await startFakeLlm();
  workspaceDir = mkdtempSync(path.join(tmpdir(), "loopd-queue-ws-"));
  database = await createProcessDatabase("loopd-queue-db-");
  env = {
    ...database.env,
    ANTHROPIC_BASE_URL: llm.url,
    ANTHROPIC_API_KEY: "test",
    RUN_LEASE_MS: "1500",
    SHUTDOWN_TIMEOUT_MS: "1000",
    WORKSPACE_DIR: workspaceDir,
    LOG_LEVEL: "warn",
  };
});

afterAll(async () => {
  await killAllLoopd();
  await llm?.close();
  await database?.drop();
  if (workspaceDir) rmSync(workspaceDir, { recursive: true, force: true });
});

test(`a queued run starts after the process running the run ahead of it is killed (${testDatabaseKind})`, async () => {
  const first: LoopdProcess = await spawnLoopd({ env, entry: "test/e2e/main-with-test-tools.ts" });
  const second =
    testDatabaseKind === "postgres" ? await spawnLoopd({ env, entry: "test/e2e/main-with-test-tools.ts" }) : undefined;
  const viaFirst = loopdClient(() => first.url);
  const conv = await viaFirst.createConversation({ provider: "anthropic" });
  // The run ahead hangs in its model call until its process dies; taken over, it answers.
  llm.script({ hang: true }, { text: "taken over" }, { text: "the queued answer" });
  const ahead = await viaFirst.sendStreaming(conv.id, "first");
  const aheadId = (await ahead.until((e) => e.event === "run.created", 10_000)).data.run.id;
  while (llm.requests.length === 0) await new Promise((r) => setTimeout(r, 20));

  let survivor = first;
  const queuing = second ?? first;
  const res = await fetch(`${queuing.url}/conversations/${conv.id}/messages`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ content: "second", on_busy: "enqueue", wait: false }),
  });
  expect(res.status).toBe(202);
  const queued = ((await res.json()) as any).run;
  expect(queued).toMatchObject({ status: "queued", queued_behind: aheadId });

  expect(await killProcess(first)).toEqual({ code: null, signal: "SIGKILL" });
  ahead.close();
  survivor = second ?? (await spawnLoopd({ env, entry: "test/e2e/main-with-test-tools.ts" }));
  const client = loopdClient(() => survivor.url);

  expect(await client.waitForRunEnd(conv.id, aheadId, 30_000)).toMatchObject({ status: "completed" });
  expect(await client.waitForRunEnd(conv.id, queued.id, 30_000)).toMatchObject({ status: "completed" });
  const history = await client.messages(conv.id);
  expect(history.map((m) => [m.role, m.content[0].text])).toEqual([
    ["user", "first"],
    ["assistant", "taken over"],
    ["user", "second"],
    ["assistant", "the queued answer"],
  ]);
  expect(unansweredToolCalls(history)).toEqual([]);
  const events = await client.allEvents(conv.id, queued.id);
  expect(expectCompleteEventLog(events)).toMatchObject({ event: "run.completed" });
  expect(events.slice(0, 2).map((e) => e.event)).toEqual(["run.created", "run.started"]);
  await killAllLoopd();
});
