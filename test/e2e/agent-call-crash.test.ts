import { afterAll, beforeAll, beforeEach, describe, expect, test, vi } from "vitest";
import { until } from "../support/helpers/lag-event-loop.js";
import type { FakeLlm } from "../support/fake-llm/server.js";
import { testDatabaseKind } from "../support/helpers/test-database.js";
import { openProcessFixture, type ProcessFixture } from "./process-fixture.js";
import { loopdClient, unansweredToolCalls } from "./loopd-client.js";
import { killAllLoopd, killProcess, spawnLoopd, type LoopdProcess } from "./loopd-process.js";

// Real processes, each compiling the sources at start: slow on a busy machine, so bounds, not measures, are generous.
vi.setConfig({ testTimeout: 150_000, hookTimeout: 150_000 });

/*
 * An agent calling an agent, in a real loopd process killed with SIGKILL
 * while the child run streams its answer: after the restart the child is
 * taken up again and finishes, and the parent (whose call of the child had
 * no result yet) finds that same child again, takes its end as the call's
 * result, and goes on. Neither history is left with an orphan call (the fake
 * LLM rejects malformed histories), and the call never made a second child.
 */

const RUN_LEASE_MS = 1_500;
/** 40 words at 200 ms each: still streaming long after the child's call began. */
const LONG_ANSWER = `Research notes: ${Array.from({ length: 38 }, (_, i) => `fact${i}`).join(" ")}.`;

let llm: FakeLlm;
let fixture: ProcessFixture | undefined;
let env: Record<string, string>;
let loopd: LoopdProcess;
const client = loopdClient(() => loopd.url);

async function startLoopd(): Promise<LoopdProcess> {
  loopd = await spawnLoopd({ env, entry: "test/e2e/main-with-test-tools.ts" });
  return loopd;
}

async function post(url: string, body: unknown): Promise<any> {
  const res = await fetch(`${loopd.url}${url}`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify(body),
  });
  return { status: res.status, body: await res.json() };
}

beforeAll(async () => {
  fixture = await openProcessFixture("agent-call", { RUN_LEASE_MS: String(RUN_LEASE_MS), SHUTDOWN_TIMEOUT_MS: "1000" });
  ({ llm, env } = fixture);
  await startLoopd();
});

afterAll(async () => {
  await killAllLoopd();
  await fixture?.close();
});

beforeEach(async () => {
  llm.reset();
  if (loopd.ended()) await startLoopd();
});

describe(`an agent's call of an agent, in a process on ${testDatabaseKind}`, () => {
  describe.each(["anthropic", "openai"] as const)("through %s", (provider) => {
    test("killed mid-child (SIGKILL): the child finishes after the restart and the parent goes on with its result", async () => {
      const researcher = `researcher-${provider}`;
      expect((await post("/agents", { name: researcher, provider, description: "Finds facts" })).status).toBe(201);
      const conv = await client.createConversation({ provider, agents: [researcher], tools: [] });
      llm.script(
        { toolCalls: [{ name: `agent__${researcher}`, input: { message: "Gather the facts" } }] },
        { text: LONG_ANSWER, chunkDelayMs: 200 },
      );
      const started = await post(`/conversations/${conv.id}/messages`, { content: "Research this", wait: false });
      expect(started.status).toBe(202);
      const runId: string = started.body.run.id;
      // The child's model call is streaming: the parent's call of it has no result yet.
      await until(() => llm.requests.length === 2, { timeoutMs: 20_000 });
      // The child's run starts a moment before the parent records it (on a busy machine, more).
      const child = await vi.waitFor(
        async () => {
          const [c] = (await client.run(conv.id, runId)).children;
          expect(c).toBeDefined();
          return c;
        },
        { timeout: 10_000, interval: 20 },
      );
      expect(await killProcess(loopd)).toEqual({ code: null, signal: "SIGKILL" });

      llm.script({ text: "The facts, gathered again." }, { text: "Here is what the researcher found." });
      await startLoopd();
      const childRun = await client.waitForRunEnd(child.conversation_id, child.run_id, 30_000);
      expect(childRun).toMatchObject({ status: "completed", error: null });
      const run = await client.waitForRunEnd(conv.id, runId, 30_000);
      expect(run).toMatchObject({ status: "completed", stop_reason: "end_turn", error: null });
      // One child for the one call: the recovered parent found it again.
      expect(run.children).toEqual([child]);
      expect(llm.requests).toHaveLength(4);

      const history = await client.messages(conv.id);
      expect(unansweredToolCalls(history)).toEqual([]);
      const result = history.find((m) => m.role === "tool").content[0];
      expect(result.is_error).toBe(false);
      expect(JSON.parse(result.content)).toMatchObject({
        ...child,
        status: "completed",
        answer: "The facts, gathered again.",
      });
      expect(unansweredToolCalls(await client.messages(child.conversation_id))).toEqual([]);

      // Both histories are valid for the provider: the next message on each goes through the fake's checks.
      llm.script({ text: "Anything else?" }, { text: "More facts." });
      expect((await client.send(conv.id, "Thanks")).run.status).toBe("completed");
      expect((await client.send(child.conversation_id, "More?")).run.status).toBe("completed");
    });
  });
});
