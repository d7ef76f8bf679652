import { mkdtempSync, rmSync } from "node:fs";
import { until } from "../support/helpers/lag-event-loop.js";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, beforeAll, beforeEach, describe, expect, test, vi } from "vitest";
import { startFakeLlm, type FakeLlm, type FakeTurn } from "../support/fake-llm/server.js";
import { testDatabaseKind } from "../support/helpers/test-database.js";
import { createProcessDatabase } from "./process-database.js";
import { toolCallIdsIn, toolResultsIn, userTextsIn } from "../support/helpers/wire.js";
import { expectCompleteEventLog, isTerminalEvent, loopdClient, unansweredToolCalls } from "./loopd-client.js";
import { killAllLoopd, killProcess, spawnLoopd, type LoopdProcess } from "./loopd-process.js";
import { processState } from "../support/helpers/non-reaping-parent.js";

// Real processes, each compiling the sources at start: slow on a busy machine, so bounds, not measures, are generous.
vi.setConfig({ testTimeout: 150_000, hookTimeout: 150_000 });

/*
 * loopd as a real child process (`node --import tsx src/main.ts`) on a real
 * database, killed with SIGKILL or stopped with SIGTERM in the middle of a
 * run, then started again on the same data. The scenarios share one database
 * and run in order; each starts loopd again if the one before left it dead.
 */

/** Short, so that a run of a killed process can be taken over quickly. */
const RUN_LEASE_MS = 1_500;
const SHUTDOWN_TIMEOUT_MS = 1_000;
/** 40 words at 200 ms each: still streaming long after the first delta arrives. */
const LONG_ANSWER = `Once upon a time ${Array.from({ length: 36 }, (_, i) => `word${i}`).join(" ")}.`;
const SLOW = 200;

let llm: FakeLlm;
let database: Awaited<ReturnType<typeof createProcessDatabase>> | undefined;
let workspaceDir: string;
let env: Record<string, string>;
let loopd: LoopdProcess;
const client = loopdClient(() => loopd.url);

async function startLoopd(): Promise<LoopdProcess> {
  loopd = await spawnLoopd({ env, entry: "test/e2e/main-with-test-tools.ts" });
  return loopd;
}

beforeAll(async () => {
  llm = await startFakeLlm();
  workspaceDir = mkdtempSync(path.join(tmpdir(), "loopd-process-ws-"));
  database = await createProcessDatabase("loopd-process-db-");
  env = {
    ...database.env,
    ANTHROPIC_BASE_URL: llm.url,
    OPENAI_BASE_URL: `${llm.url}/v1`,
    ANTHROPIC_API_KEY: "test",
    OPENAI_API_KEY: "test",
    RUN_LEASE_MS: String(RUN_LEASE_MS),
    SHUTDOWN_TIMEOUT_MS: String(SHUTDOWN_TIMEOUT_MS),
    WORKSPACE_DIR: workspaceDir,
    LOG_LEVEL: "warn",
  };
  await startLoopd();
});

afterAll(async () => {
  await killAllLoopd();
  await llm?.close();
  await database?.drop();
  if (workspaceDir) rmSync(workspaceDir, { recursive: true, force: true });
});

beforeEach(async () => {
  llm.reset();
  if (loopd.ended()) await startLoopd();
});

describe(`loopd as a process on ${testDatabaseKind}`, () => {
  describe.each(["anthropic", "openai"] as const)("through %s", (provider) => {
    test("killed mid-answer (SIGKILL): the next process resumes the run, which completes with a whole event log", async () => {
      const conv = await client.createConversation({ provider });
      llm.script({ text: LONG_ANSWER, chunkDelayMs: SLOW }, { text: "The whole story, after the restart." });

      const stream = await client.sendStreaming(conv.id, "Tell me a long story.");
      expect(stream.status).toBe(200);
      const runId = (await stream.until((e) => e.event === "run.created", 10_000)).data.run.id;
      await stream.until((e) => e.event === "text.delta", 10_000);
      expect(await killProcess(loopd)).toEqual({ code: null, signal: "SIGKILL" });
      stream.close();

      await startLoopd();
      const run = await client.waitForRunEnd(conv.id, runId, 20_000);
      expect(run).toMatchObject({ status: "completed", stop_reason: "end_turn", error: null, steps: 1 });
      // The resumed call was made again from the saved history: the user message alone.
      expect(llm.requests).toHaveLength(2);
      expect(userTextsIn(llm.requests[1]!)).toEqual(["Tell me a long story."]);

      const events = await client.allEvents(conv.id, runId);
      expect(expectCompleteEventLog(events)).toMatchObject({
        event: "run.completed",
        data: { run: { id: runId, status: "completed" } },
      });
      // The restarted step is announced, and its deltas after the marker add up to the saved text.
      const restart = events.findIndex((e) => e.event === "step.restarted");
      expect(restart).toBeGreaterThan(0);
      const deltas = events
        .slice(restart)
        .filter((e) => e.event === "text.delta")
        .map((e) => e.data.delta);
      expect(deltas.join("")).toBe("The whole story, after the restart.");
      const history = await client.messages(conv.id);
      expect(history.map((m) => m.role)).toEqual(["user", "assistant"]);
      expect(history[1].content).toEqual([{ type: "text", text: "The whole story, after the restart." }]);
      expect(unansweredToolCalls(history)).toEqual([]);

      llm.script({ text: "And they lived happily." });
      const next = await client.send(conv.id, "And then?");
      expect(next.run).toMatchObject({ status: "completed", error: null });
      expect(next.output_text).toBe("And they lived happily.");
    });

    test("killed mid-tool (SIGKILL): the next process answers the call as interrupted (it may or may not have taken effect) and resumes the run", async () => {
      const conv = await client.createConversation({ provider });
      llm.script(
        { text: "Let me look.", toolCalls: [{ name: "block_until_stopped", input: {} }] },
        { text: "The lookup was interrupted; shall I try again?" },
      );

      const stream = await client.sendStreaming(conv.id, "Find the needle.");
      const runId = (await stream.until((e) => e.event === "run.created", 10_000)).data.run.id;
      const started = await stream.until((e) => e.event === "tool_call.started", 10_000);
      expect(started.data).toMatchObject({ name: "block_until_stopped" });
      const callId: string = started.data.tool_call_id;
      expect(await killProcess(loopd)).toEqual({ code: null, signal: "SIGKILL" });
      stream.close();

      await startLoopd();
      const run = await client.waitForRunEnd(conv.id, runId, 20_000);
      // The same policy as a graceful stop mid-tool: the model learns the call was cut off and goes on.
      expect(run).toMatchObject({ status: "completed", stop_reason: "end_turn", error: null, steps: 2 });
      expect(llm.requests).toHaveLength(2);
      // The provider accepted the history: the call and its interrupted result, ids verbatim.
      expect(toolCallIdsIn(llm.requests[1]!)).toEqual([callId]);
      expect(toolResultsIn(llm.requests[1]!)).toEqual([
        { id: callId, content: expect.stringContaining("may or may not have taken effect"), isError: true },
      ]);

      const history = await client.messages(conv.id);
      expect(history.map((m) => m.role)).toEqual(["user", "assistant", "tool", "assistant"]);
      expect(history[2].content).toEqual([
        {
          type: "tool_result",
          tool_call_id: callId,
          name: "block_until_stopped",
          content: expect.stringContaining("interrupted"),
          is_error: true,
        },
      ]);
      expect(unansweredToolCalls(history)).toEqual([]);
      const events = await client.allEvents(conv.id, runId);
      expect(expectCompleteEventLog(events)).toMatchObject({ event: "run.completed" });
      // Every started call is completed in the log, the interrupted one included.
      const completed = events.filter((e) => e.event === "tool_call.completed");
      expect(completed).toEqual([
        expect.objectContaining({
          data: expect.objectContaining({
            tool_call_id: callId,
            is_error: true,
            content: expect.stringContaining("interrupted"),
          }),
        }),
      ]);
      expect(events.some((e) => e.event === "step.restarted")).toBe(false);

      llm.script({ text: "Nothing more to say." });
      const next = await client.send(conv.id, "What happened?");
      expect(next.run).toMatchObject({ status: "completed", error: null });
    });

    describe("killed in a steps-budget grace turn (SIGKILL): the run taken up again makes the grace call and ends incomplete / max_steps", () => {
      /** A run of max_steps 2: a tool step, then the grace call, which the test holds open; `killAt` waits for the moment to kill. */
      async function killedInGraceTurn(
        killAt: (stream: Awaited<ReturnType<typeof client.sendStreaming>>) => Promise<unknown>,
        graceCall: FakeTurn,
      ) {
        const conv = await client.createConversation({ provider });
        llm.script({ toolCalls: [{ name: "calculate", input: { expression: "6*7" } }] }, graceCall, {
          text: "42, and that is all I had time for.",
        });
        const stream = await client.sendStreaming(conv.id, "What is 6*7?", { budget: { max_steps: 2 } });
        const runId = (await stream.until((e) => e.event === "run.created", 10_000)).data.run.id;
        await killAt(stream);
        expect(await killProcess(loopd)).toEqual({ code: null, signal: "SIGKILL" });
        stream.close();

        await startLoopd();
        const run = await client.waitForRunEnd(conv.id, runId, 20_000);
        expect(run).toMatchObject({
          status: "incomplete",
          stop_reason: "max_steps",
          budget_exceeded: "steps",
          steps: 2,
          error: null,
        });
        expect(llm.requests).toHaveLength(3);
        // The call made again is the grace call: tools disabled, the notice (once) as the newest user text.
        const again = llm.requests[2]!;
        expect(provider === "anthropic" ? again.body.tool_choice?.type : again.body.tool_choice).toBe("none");
        expect(userTextsIn(again).at(-1)).toMatch(/step budget reached/);
        const history = await client.messages(conv.id);
        expect(history.map((m) => m.role)).toEqual(["user", "assistant", "tool", "user", "assistant"]);
        expect(history.filter((m) => m.kind === "notice")).toHaveLength(1);
        expect(history.at(-1).content).toEqual([{ type: "text", text: "42, and that is all I had time for." }]);
        expect(expectCompleteEventLog(await client.allEvents(conv.id, runId))).toMatchObject({
          data: { run: { status: "incomplete", stop_reason: "max_steps" } },
        });
      }

      test("while the grace call streams", async () => {
        // The grace answer stops mid-stream and holds the connection: the kill comes after its first words.
        await killedInGraceTurn((stream) => stream.until((e) => e.event === "text.delta", 10_000), {
          text: LONG_ANSWER,
          stallAfterChunks: 4,
        });
      });

      test("right after its notice was saved, before any of its answer", async () => {
        await killedInGraceTurn(() => until(() => llm.requests.length === 2, { timeoutMs: 10_000 }), { hang: true });
      });
    });
  });

  test("killed (SIGKILL) under a parent that does not reap it: the zombie holds nothing, the next process starts at once and resumes the run", async () => {
    await killProcess(loopd);
    loopd = await spawnLoopd({ env, entry: "test/e2e/main-with-test-tools.ts", unreaped: true });
    const conv = await client.createConversation({ provider: "openai" });
    llm.script({ text: LONG_ANSWER, chunkDelayMs: SLOW }, { text: "Finished after the restart." });
    const stream = await client.sendStreaming(conv.id, "Tell me a long story.");
    const runId = (await stream.until((e) => e.event === "run.created", 10_000)).data.run.id;
    await stream.until((e) => e.event === "text.delta", 10_000);
    const zombie = loopd;
    try {
      expect(await killProcess(zombie)).toEqual({ code: null, signal: "SIGKILL" });
      stream.close();
      expect(processState(zombie.pid)).toBe("Z");

      // On the embedded database, its folder's lock names the zombie's pid, which kill(pid, 0) still finds.
      await startLoopd();
      expect(await client.waitForRunEnd(conv.id, runId, 20_000)).toMatchObject({
        status: "completed",
        stop_reason: "end_turn",
        error: null,
      });
      expect(expectCompleteEventLog(await client.allEvents(conv.id, runId))).toMatchObject({ event: "run.completed" });
    } finally {
      zombie.child.kill("SIGKILL");
    }
  });

  test("a paused run survives SIGKILL: it holds no process, and the next process takes the answer and goes on", async () => {
    const invoice = {
      name: "create_invoice",
      description: "Creates an invoice (the client does).",
      input_schema: { type: "object", properties: { customer: { type: "string" } } },
    };
    const conv = await client.createConversation({
      provider: "openai",
      approval_required: ["calculate"],
      client_tools: [invoice],
    });
    llm.script({
      toolCalls: [
        { name: "get_current_time", input: { timezone: "UTC" } },
        { name: "calculate", input: { expression: "6*7" } },
        { name: "create_invoice", input: { customer: "ACME" } },
      ],
    });
    const paused = (await client.send(conv.id, "Time, 6*7, and bill ACME")).run;
    expect(paused).toMatchObject({ status: "requires_action" });
    expect(await killProcess(loopd)).toEqual({ code: null, signal: "SIGKILL" });

    await startLoopd();
    // Still waiting, unchanged, whoever serves it now.
    const [calc, inv] = paused.required_action.tool_calls;
    expect(await client.run(conv.id, paused.id)).toMatchObject({
      status: "requires_action",
      required_action: paused.required_action,
    });
    llm.script({ text: "42, and ACME is billed." });
    const done = await client.answer(conv.id, paused.id, {
      approvals: [{ tool_call_id: calc.tool_call_id, approve: true }],
      tool_outputs: [{ tool_call_id: inv.tool_call_id, output: "INV-42" }],
    });
    expect(done.run).toMatchObject({ id: paused.id, status: "completed", steps: 2 });
    expect(llm.requests).toHaveLength(2);
    const results = toolResultsIn(llm.requests[1]!);
    expect(results.map((r) => r.id)).toEqual([...toolCallIdsIn(llm.requests[1]!)]);
    expect(results[1]!.content).toContain("42");
    expect(results[2]!.content).toBe("INV-42");
    expect(unansweredToolCalls(await client.messages(conv.id))).toEqual([]);
    expect(expectCompleteEventLog(await client.allEvents(conv.id, paused.id))).toMatchObject({
      event: "run.completed",
    });
  });

  test("a budgeted run killed mid-tool keeps its budget: what it spent before the crash counts after the restart", async () => {
    const conv = await client.createConversation({ provider: "openai", caching: false });
    // Only output is scripted: the input is what the fake counts of each request, as a real API would.
    const usage = { output: 100 };
    llm.script(
      { toolCalls: [{ name: "calculate", input: { expression: "1+1" } }], usage },
      { toolCalls: [{ name: "block_until_stopped", input: {} }], usage },
      { text: "Here is what I have.", usage },
    );
    const input = (
      (await (await fetch(`${loopd.url}/conversations/${conv.id}/context`)).json()) as {
        estimated_input_tokens: number;
      }
    ).estimated_input_tokens;
    // Two normal calls fit (each with a grace call after it, grown as the steps have shown), a third does not; its grace call does.
    const stream = await client.sendStreaming(conv.id, "Work.", { budget: { max_tokens: Math.round(5.6 * input) } });
    const runId = (await stream.until((e) => e.event === "run.created", 10_000)).data.run.id;
    await stream.until((e) => e.event === "tool_call.started" && e.data.name === "block_until_stopped", 10_000);
    expect(await killProcess(loopd)).toEqual({ code: null, signal: "SIGKILL" });
    stream.close();

    await startLoopd();
    const run = await client.waitForRunEnd(conv.id, runId, 20_000);
    expect(run).toMatchObject({ status: "incomplete", stop_reason: "budget", budget_exceeded: "tokens", steps: 3 });
    expect(llm.requests).toHaveLength(3);
    // The two calls before the crash count: the usage holds all three calls' (100 output tokens each).
    expect(run.usage.output_tokens).toBe(300);
    expect(run.usage.input_tokens).toBeGreaterThan(llm.requests[0]!.counted!.input + llm.requests[1]!.counted!.input);
    expect(llm.requests[2]!.body.tool_choice).toBe("none");
    expect(userTextsIn(llm.requests[2]!).at(-1)).toMatch(/token budget reached/);
    expect(unansweredToolCalls(await client.messages(conv.id))).toEqual([]);
  });

  test("SIGTERM mid-answer: open requests get their answer, the process exits 0 within seconds, and the next process finishes the runs", async () => {
    const streamed = await client.createConversation({ provider: "anthropic" });
    const waited = await client.createConversation({ provider: "openai" });
    llm.script({ text: LONG_ANSWER, chunkDelayMs: SLOW }, { text: LONG_ANSWER, chunkDelayMs: SLOW });

    const stream = await client.sendStreaming(streamed.id, "Tell me another long story.");
    const runId = (await stream.until((e) => e.event === "run.created", 10_000)).data.run.id;
    await stream.until((e) => e.event === "text.delta", 10_000);
    // A non-streaming send waits for its run's end, which this process will not see.
    const answer = client.send(waited.id, "And a third one.");
    await until(() => llm.requests.length === 2, { timeoutMs: 10_000 });
    const stopping = loopd;
    const signalledAt = Date.now();
    stopping.child.kill("SIGTERM");

    // The stream finishes (it does not hang), without a terminal event: the run was left for the next process.
    expect(await stream.rest(SHUTDOWN_TIMEOUT_MS + 5_000)).toEqual({ kind: "ended" });
    expect(stream.events.some(isTerminalEvent)).toBe(false);
    // The waiting send is answered with its run as it stands.
    const left = (await answer).run;
    expect(left).toMatchObject({ status: "running", conversation_id: waited.id });
    expect(await stopping.exited).toEqual({ code: 0, signal: null });
    // The shutdown waited SHUTDOWN_TIMEOUT_MS for the runs, then stopped them; no lingering socket held it.
    expect(Date.now() - signalledAt, stopping.output()).toBeLessThan(SHUTDOWN_TIMEOUT_MS + 3_000);

    llm.script({ text: "Finished by the next process." }, { text: "Finished by the next process." });
    await startLoopd();
    for (const [conv, id] of [
      [streamed.id, runId],
      [waited.id, left.id],
    ] as const) {
      expect(await client.waitForRunEnd(conv, id, 20_000)).toMatchObject({
        status: "completed",
        stop_reason: "end_turn",
        error: null,
      });
      const events = await client.allEvents(conv, id);
      expect(expectCompleteEventLog(events)).toMatchObject({ event: "run.completed" });
      const history = await client.messages(conv);
      expect(history.map((m) => m.role)).toEqual(["user", "assistant"]);
      expect(history[1].content).toEqual([{ type: "text", text: "Finished by the next process." }]);
    }
    expect(llm.requests).toHaveLength(4);
    // What the first stream got is the start of the same log.
    expect((await client.allEvents(streamed.id, runId)).slice(0, stream.events.length)).toEqual(stream.events);

    llm.script({ text: "The end." });
    expect((await client.send(streamed.id, "And then?")).run.status).toBe("completed");
  });
});
