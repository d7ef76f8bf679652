import { afterAll, beforeAll, expect, test, vi } from "vitest";
import { until } from "../support/helpers/lag-event-loop.js";
import { testDatabaseKind } from "../support/helpers/test-database.js";
import { openProcessFixture, type ProcessFixture } from "./process-fixture.js";
import { killAllLoopd, killProcess, spawnLoopd, type LoopdProcess } from "./loopd-process.js";

// Real processes: slow to start on a busy machine, so bounds, not measures, are generous.
vi.setConfig({ testTimeout: 150_000, hookTimeout: 150_000 });

/*
 * `store: false` keeps nothing after the answer: the request deletes the
 * conversation it made once answered. A process killed (SIGKILL) before
 * that cannot; the conversation carries a time past which any process
 * deletes it, pushed on by the one holding it (here every 250 ms of a 1 s
 * keep). Before, it stayed for good (or until RETENTION_DAYS), its run
 * taken over for nobody.
 */

const KEEP_MS = 1_000;
let fixture: ProcessFixture | undefined;

beforeAll(async () => {
  fixture = await openProcessFixture("throwaway", { LOOPD_TEST_THROWAWAY_KEEP_MS: String(KEEP_MS) });
});

afterAll(async () => {
  await killAllLoopd();
  await fixture?.close();
});

const start = () => spawnLoopd({ env: fixture!.env, entry: "test/e2e/main-with-test-tools.ts" });

async function conversationIds(loopd: LoopdProcess): Promise<string[]> {
  const res = await fetch(`${loopd.url}/conversations?limit=100`);
  expect(res.status).toBe(200);
  return ((await res.json()) as { data: Array<{ id: string }> }).data.map((c) => c.id);
}

function respond(loopd: LoopdProcess, body: Record<string, unknown>, signal?: AbortSignal) {
  return fetch(`${loopd.url}/v1/responses`, {
    method: "POST",
    ...(signal && { signal }),
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ model: "openai/gpt-4o-mini", ...body }),
  });
}

test(`on ${testDatabaseKind}: a store: false conversation is deleted after its process is killed; one still held is kept`, async () => {
  const { llm } = fixture!;
  let loopd = await start();
  llm.script({ hang: true });
  const abandoned = respond(loopd, { input: "Keep nothing of this.", store: false }).catch(() => null);
  await until(() => llm.requests.length === 1, { timeoutMs: 20_000, what: "the model call" });
  const [throwaway] = await conversationIds(loopd);
  expect(throwaway).toBeDefined();
  expect(await killProcess(loopd)).toEqual({ code: null, signal: "SIGKILL" });
  await abandoned;

  // The restarted process may take the run over: its model call hangs, as does the next response's.
  llm.reset();
  llm.script({ hang: true }, { hang: true });
  loopd = await start();
  const client = new AbortController();
  const held = respond(loopd, { input: "This one is still wanted.", store: false }, client.signal).catch(() => null);
  const others = await vi.waitFor(
    async () => {
      const ids = (await conversationIds(loopd)).filter((id) => id !== throwaway);
      expect(ids).toHaveLength(1);
      return ids;
    },
    { timeout: 30_000, interval: 100 },
  );
  await vi.waitFor(async () => expect(await conversationIds(loopd)).toEqual(others), {
    timeout: 30_000,
    interval: 100,
  });
  // Held by the live process, the other outlives several of its keeps (renewed every quarter of one).
  await new Promise((resolve) => setTimeout(resolve, 3 * KEEP_MS));
  expect(await conversationIds(loopd)).toEqual(others);

  // Its client goes: the request deletes it, as ever.
  client.abort();
  await held;
  await vi.waitFor(async () => expect(await conversationIds(loopd)).toEqual([]), { timeout: 10_000, interval: 100 });
});
