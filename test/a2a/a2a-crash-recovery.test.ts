/**
 * A task is a run, kept in loopd's database: loopd killed with SIGKILL
 * while an A2A task runs, started again on the same data, answers
 * `GetTask` for it, and the task finishes there.
 */
import { TaskState, type Task } from "@a2a-js/sdk";
import { afterAll, beforeAll, describe, expect, test, vi } from "vitest";
import type { FakeLlm } from "../support/fake-llm/server.js";
import { testDatabaseKind } from "../support/helpers/test-database.js";
import { openProcessFixture, type ProcessFixture } from "../e2e/process-fixture.js";
import { killAllLoopd, killProcess, sleep, spawnLoopd, type LoopdProcess } from "../e2e/loopd-process.js";
import { a2aClient, textsOf, userMessage } from "./a2a-client.js";

// Real processes, each compiling the sources at start: bounds, not measures, are generous.
vi.setConfig({ testTimeout: 150_000, hookTimeout: 150_000 });

const LONG_ANSWER = `Once upon a time ${Array.from({ length: 30 }, (_, i) => `word${i}`).join(" ")}.`;

let llm: FakeLlm;
let fixture: ProcessFixture | undefined;
let env: Record<string, string>;
let loopd: LoopdProcess;

async function until<T>(value: () => Promise<T | undefined> | T | undefined, timeoutMs: number): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const found = await value();
    if (found !== undefined) return found;
    if (Date.now() > deadline) throw new Error(`not within ${timeoutMs} ms`);
    await sleep(50);
  }
}

beforeAll(async () => {
  fixture = await openProcessFixture("a2a", { SHUTDOWN_TIMEOUT_MS: "1000" });
  ({ llm, env } = fixture);
  loopd = await spawnLoopd({ env });
});

afterAll(async () => {
  await killAllLoopd();
  await fixture?.close();
});

describe(`an A2A task across a crash, on ${testDatabaseKind}`, () => {
  test.each(["anthropic", "openai"] as const)(
    "through %s: killed mid-answer, the next process finishes the task, and GetTask shows it",
    async (provider) => {
      llm.reset();
      if (loopd.ended()) loopd = await spawnLoopd({ env });
      const name = `crash-${provider}`;
      const made = await fetch(`${loopd.url}/agents`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ name, provider }),
      });
      expect(made.status).toBe(201);
      llm.script({ text: LONG_ANSWER, chunkDelayMs: 200 }, { text: "The whole story, after the restart." });

      const client = await a2aClient(loopd.url, name, null);
      let task: Task | undefined;
      const reading = (async () => {
        for await (const event of client.sendMessageStream(userMessage("Tell me a long story."))) {
          if (event.payload?.$case === "task") task = event.payload.value;
        }
      })().catch(() => {}); // the stream breaks with the process
      const started = await until(() => task, 20_000);
      await until(() => (llm.requests.length > 0 ? true : undefined), 20_000);
      expect(await killProcess(loopd)).toEqual({ code: null, signal: "SIGKILL" });
      await reading;

      loopd = await spawnLoopd({ env });
      const again = await a2aClient(loopd.url, name, null);
      const ended = await until(async () => {
        const now = await again.getTask({ tenant: "", id: started.id });
        return now.status?.state === TaskState.TASK_STATE_WORKING ||
          now.status?.state === TaskState.TASK_STATE_SUBMITTED
          ? undefined
          : now;
      }, 30_000);
      expect(ended).toMatchObject({ id: started.id, contextId: started.contextId });
      expect(ended.status?.state).toBe(TaskState.TASK_STATE_COMPLETED);
      expect(textsOf(ended.artifacts[0]?.parts)).toEqual(["The whole story, after the restart."]);
      expect(llm.requests.map((r) => r.api)).toEqual([provider, provider]);
    },
  );
});
