import { afterAll, beforeAll, expect, test, vi } from "vitest";
import type { Database } from "../../src/store/db.js";
import { startFakeLlm, type FakeLlm } from "../support/fake-llm/server.js";
import { testDatabaseKind } from "../support/helpers/test-database.js";
import { loopdClient } from "./loopd-client.js";
import { createProcessDatabase } from "./process-database.js";
import { killAllLoopd, killProcess, spawnLoopd, type LoopdProcess } from "./loopd-process.js";

vi.setConfig({ testTimeout: 150_000, hookTimeout: 150_000 });

/*
 * loopd as a real process killed with SIGKILL in the middle of a run of
 * many quick steps: whatever step the kill lands on, every message the run
 * saved has its trace span (they are written by the same statement), and
 * after the restart the trace goes on from there, its requests rebuilt
 * exactly.
 */

let llm: FakeLlm;
let database: Awaited<ReturnType<typeof createProcessDatabase>> | undefined;
let env: Record<string, string>;
let loopd: LoopdProcess;
const client = loopdClient(() => loopd.url);

beforeAll(async () => {
  llm = await startFakeLlm();
  database = await createProcessDatabase("loopd-trace-crash-");
  env = {
    ...database.env,
    OPENAI_BASE_URL: `${llm.url}/v1`,
    OPENAI_API_KEY: "test",
    RUN_LEASE_MS: "1500",
    MAX_STEPS_LIMIT: "200",
    LOG_LEVEL: "warn",
  };
  loopd = await spawnLoopd({ env });
});

afterAll(async () => {
  await killAllLoopd();
  await llm?.close();
  await database?.drop();
});

/** The seqs of the run's answers and results, and of those saved without their span, read straight from the database (the process is dead). */
async function savedWithoutTrace(
  conversationId: string,
  runId: string,
): Promise<{ seqs: number[]; untraced: number[] }> {
  const db: Database = await database!.open();
  try {
    const messages = await db.query({
      name: "",
      text: "select seq, span is not null as traced from messages where conversation_id = $1 and run_id = $2 and role <> 'user' order by seq",
      values: [conversationId, runId],
    });
    return {
      seqs: messages.map((m: any) => Number(m.seq)),
      untraced: messages.filter((m: any) => m.traced !== true).map((m: any) => Number(m.seq)),
    };
  } finally {
    await db.close();
  }
}

test(`killed (SIGKILL) at any step, a run never has a step without its trace (${testDatabaseKind})`, async () => {
  const conv = await client.createConversation({ provider: "openai" });
  let calls = 0;
  llm.respond = () =>
    ++calls < 60
      ? { toolCalls: [{ name: "calculate", input: { expression: `${calls}+1` } }], chunkDelayMs: 2 }
      : { text: "Done." };
  const stream = await client.sendStreaming(conv.id, "Count.", { max_steps: 200 });
  const runId = (await stream.until((e) => e.event === "run.created", 10_000)).data.run.id;
  // Somewhere in the middle of the run, between or inside its writes: after a step chosen at random (never the first, so a step has gone by whole).
  const killAfter = 2 + Math.floor(Math.random() * 40);
  let completed = 0;
  await stream.until(
    (e) => e.event === "tool_call.completed" && e.data.name === "calculate" && ++completed === killAfter,
    30_000,
  );
  expect(await killProcess(loopd)).toEqual({ code: null, signal: "SIGKILL" });
  stream.close();

  const cut = await savedWithoutTrace(conv.id, runId);
  expect(cut.seqs.length).toBeGreaterThan(2);
  expect(cut.untraced).toEqual([]);

  loopd = await spawnLoopd({ env });
  const run = await client.waitForRunEnd(conv.id, runId, 60_000);
  expect(run).toMatchObject({ status: "completed", stop_reason: "end_turn" });
  const res = await fetch(`${loopd.url}/conversations/${conv.id}/runs/${runId}/trace?expand=requests`);
  const { spans } = (await res.json()) as { spans: any[] };
  expect(spans.filter((s) => s.type === "run.recovered")).toHaveLength(1);
  const modelCalls = spans.filter((s) => s.type === "model.call");
  expect(modelCalls.length).toBeGreaterThanOrEqual(run.steps);
  expect(modelCalls.every((s) => s.request_verified === true)).toBe(true);
  expect(spans.at(-1)).toMatchObject({ type: "run.end", status: "completed" });
  expect(spans.filter((s) => s.type === "model.setup").length).toBe(1);
  await killProcess(loopd);
  const saved = await savedWithoutTrace(conv.id, runId);
  expect(saved.untraced).toEqual([]);
  // Every answer and result the run saved is told by one span of the trace, in order.
  const told = spans.flatMap((s) =>
    s.type === "model.call" ? [s.response.message_seq] : s.type === "tool.call" ? [s.result_seq] : [],
  );
  expect(told).toEqual(saved.seqs);
});
