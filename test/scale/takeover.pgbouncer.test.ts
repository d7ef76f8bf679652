/**
 * Real loopd processes behind pgbouncer in transaction mode: one is killed
 * (SIGKILL) while its run waits in a model call; the other takes the run
 * over when its lease runs out and finishes it, with nothing lost and no
 * step twice. And the pooler itself restarting mid-run: the run goes on
 * once it is back.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, beforeAll, expect, test, vi } from "vitest";
import { startFakeLlm, type FakeLlm } from "../support/fake-llm/server.js";
import { startPgbouncer, type Pgbouncer } from "../support/helpers/pgbouncer.js";
import { admin } from "../support/helpers/test-database.js";
import { SERVER_URL } from "../support/helpers/use-pooled-loopd.js";
import { expectCompleteEventLog, loopdClient, unansweredToolCalls } from "../e2e/loopd-client.js";
import { killAllLoopd, killProcess, spawnLoopd } from "../e2e/loopd-process.js";

vi.setConfig({ testTimeout: 150_000, hookTimeout: 150_000 });

let llm: FakeLlm;
let bouncer: Pgbouncer;
let workspaceDir: string;
let env: Record<string, string>;
const name = `loopd_takeover_${process.pid}_${Math.random().toString(36).slice(2, 8)}`;

beforeAll(async () => {
  llm = await startFakeLlm();
  workspaceDir = mkdtempSync(path.join(tmpdir(), "loopd-takeover-ws-"));
  await admin(SERVER_URL, `create database ${name}`);
  const direct = new URL(SERVER_URL);
  direct.pathname = `/${name}`;
  bouncer = await startPgbouncer(SERVER_URL);
  env = {
    DATABASE_URL: bouncer.urlOf(direct.toString()),
    DATABASE_DIRECT_URL: direct.toString(),
    DB_POOL_SIZE: "4",
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
  await bouncer?.close();
  await admin(SERVER_URL, `drop database if exists ${name} with (force)`);
  await llm?.close();
  if (workspaceDir) rmSync(workspaceDir, { recursive: true, force: true });
});

test("a run of a killed instance is taken over by the other through the pooler, and ends once, whole", async () => {
  const [first, second] = [await spawnLoopd({ env }), await spawnLoopd({ env })];
  const viaFirst = loopdClient(() => first.url);
  const viaSecond = loopdClient(() => second.url);
  const conv = await viaFirst.createConversation({ provider: "anthropic" });
  // The run hangs in its model call until its process dies; taken over, the call is made again and answers.
  llm.script({ hang: true }, { text: "taken over" });
  const stream = await viaFirst.sendStreaming(conv.id, "first");
  const runId = (await stream.until((e) => e.event === "run.created", 10_000)).data.run.id;
  while (llm.requests.length === 0) await new Promise((r) => setTimeout(r, 20));

  const killed = Date.now();
  expect(await killProcess(first)).toEqual({ code: null, signal: "SIGKILL" });
  stream.close();
  expect(await viaSecond.waitForRunEnd(conv.id, runId, 30_000)).toMatchObject({ status: "completed" });
  // Within about a lease and a quarter of the death, plus the sweep's period and a slow machine's margin.
  expect(Date.now() - killed).toBeLessThan(15_000);
  const history = await viaSecond.messages(conv.id);
  expect(history.map((m) => [m.role, m.content[0].text])).toEqual([
    ["user", "first"],
    ["assistant", "taken over"],
  ]);
  expect(unansweredToolCalls(history)).toEqual([]);
  const events = await viaSecond.allEvents(conv.id, runId);
  expect(expectCompleteEventLog(events)).toMatchObject({ event: "run.completed" });
  expect(events.filter((e) => e.event === "step.restarted")).toHaveLength(1);
  expect(llm.requests).toHaveLength(2);
  await killProcess(second);
});

test("the pooler restarting mid-run: the run's step is saved once it is back, and the run completes with nothing lost or twice", async () => {
  const loopd = await spawnLoopd({ env });
  const client = loopdClient(() => loopd.url);
  const conv = await client.createConversation({ provider: "anthropic" });
  llm.reset();
  // The first model call answers slowly; the pooler goes down and comes back meanwhile, so its answer is saved through the new one.
  llm.respond = () => ({ text: "after the restart" });
  llm.script({ toolCalls: [{ name: "get_current_time", input: { timezone: "UTC" } }], chunkDelayMs: 300 });
  const stream = await client.sendStreaming(conv.id, "what time is it?");
  const runId = (await stream.until((e) => e.event === "run.created", 10_000)).data.run.id;
  while (llm.requests.length === 0) await new Promise((r) => setTimeout(r, 20));
  await bouncer.stop();
  await bouncer.start();
  expect(await client.waitForRunEnd(conv.id, runId, 30_000)).toMatchObject({ status: "completed" });
  const history = await client.messages(conv.id);
  expect(history.map((m) => m.role)).toEqual(["user", "assistant", "tool", "assistant"]);
  expect(unansweredToolCalls(history)).toEqual([]);
  const events = await client.allEvents(conv.id, runId);
  expect(expectCompleteEventLog(events)).toMatchObject({ event: "run.completed" });
  expect(events.filter((e) => e.event === "tool_call.completed")).toHaveLength(1);
  stream.close();
  await killProcess(loopd);
});
