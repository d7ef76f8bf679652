import { afterAll, beforeAll, expect, test, vi } from "vitest";
import { startFakeLlm, type FakeLlm } from "../support/fake-llm/server.js";
import { testDatabaseKind } from "../support/helpers/test-database.js";
import { createProcessDatabase } from "./process-database.js";
import { expectCompleteEventLog, loopdClient, unansweredToolCalls } from "./loopd-client.js";
import { killAllLoopd, sleep, spawnLoopd, type LoopdProcess } from "./loopd-process.js";

// Real processes: slow on a busy machine, so bounds, not measures, are generous.
vi.setConfig({ testTimeout: 150_000, hookTimeout: 150_000 });

let llm: FakeLlm;
let database: Awaited<ReturnType<typeof createProcessDatabase>> | undefined;
let env: Record<string, string>;
let loopd: LoopdProcess;
const client = loopdClient(() => loopd.url);

beforeAll(async () => {
  llm = await startFakeLlm();
  database = await createProcessDatabase("loopd-outage-db-");
  env = {
    ...database.env,
    ANTHROPIC_BASE_URL: llm.url,
    OPENAI_BASE_URL: `${llm.url}/v1`,
    ANTHROPIC_API_KEY: "test",
    OPENAI_API_KEY: "test",
    MODEL_COOLDOWN_MS: "300",
    RUN_LEASE_MS: "1500",
    SHUTDOWN_TIMEOUT_MS: "1000",
    LOG_LEVEL: "warn",
  };
  loopd = await spawnLoopd({ env });
});

afterAll(async () => {
  await killAllLoopd();
  await llm?.close();
  await database?.drop();
});

async function statusOf(conversationId: string, runId: string): Promise<any> {
  return client.run(conversationId, runId);
}

test(`on ${testDatabaseKind}, a run waiting out an outage survives a SIGTERM restart and completes by itself once the model answers`, async () => {
  const conv = await client.createConversation({ provider: "anthropic", on_provider_outage: "wait" });
  llm.respond = () => ({ status: 529, message: "Overloaded" });
  const stream = await client.sendStreaming(conv.id, "Are you there?");
  const parked = await stream.until((e) => e.event === "run.waiting", 30_000);
  const run = parked.data.run;
  expect(run).toMatchObject({ status: "waiting", error: { code: "provider_unavailable" } });
  // The stream stays open while the run waits (a probe comes within the cooldown, and it parks again).
  await sleep(1_000);
  expect(
    stream.events.some((e) => e.event.startsWith("run.") && !["run.created", "run.waiting"].includes(e.event)),
  ).toBe(false);

  // Stopped while the run waits: it holds nothing, so the process exits at once, cleanly, and the stream ends.
  const stopping = loopd;
  stopping.child.kill("SIGTERM");
  expect(await stopping.exited).toEqual({ code: 0, signal: null });
  expect(await stream.rest(5_000)).toEqual({ kind: "ended" });
  expect(llm.requests.length).toBeGreaterThan(0);

  // The provider comes back while no process runs; the next one wakes the run by itself.
  llm.respond = () => ({ text: "Here again." });
  loopd = await spawnLoopd({ env });
  const deadline = Date.now() + 30_000;
  let ended = await statusOf(conv.id, run.id);
  while (["waiting", "running"].includes(ended.status) && Date.now() < deadline) {
    await sleep(100);
    ended = await statusOf(conv.id, run.id);
  }
  expect(ended).toMatchObject({ status: "completed", stop_reason: "end_turn", error: null, steps: 1 });
  const history = await client.messages(conv.id);
  expect(history.map((m) => m.role)).toEqual(["user", "assistant"]);
  expect(unansweredToolCalls(history)).toEqual([]);
  const events = await client.allEvents(conv.id, run.id);
  expect(expectCompleteEventLog(events)).toMatchObject({ event: "run.completed" });
  expect(events.some((e) => e.event === "run.waiting")).toBe(true);
});
