import { describe, expect, test } from "vitest";
import { createStore } from "../../src/store/store.js";
import { api } from "../support/helpers/api.js";
import { useLoopd } from "../support/helpers/use-loopd.js";
import { toolCallIdsIn, toolResultsIn, userTextsIn } from "../support/helpers/wire.js";
import { ORDERS, peeks, testTools } from "../support/helpers/test-tools.js";

let conversationUnderTest = "";
const f = useLoopd(() => ({
  tools: testTools({
    readHistory: async () => (await f.loopd.services.store.messages.history(conversationUnderTest)) as any,
  }),
}));

describe.each(["anthropic", "openai"] as const)("the tool-calling loop through %s", (provider) => {
  const client = () => api(f.loopd.app);
  const newConversation = (extra: Record<string, unknown> = {}) => client().createConversation({ provider, ...extra });

  test("a single tool round trip leaves user → assistant(tool_call) → tool → assistant(text) with matching ids", async () => {
    const conv = await newConversation({ system: "You are terse." });
    f.llm.script(
      { text: "Let me compute.", toolCalls: [{ name: "calculate", input: { expression: "6*7" } }] },
      { text: "6*7 = 42." },
    );

    const res = await client().send(conv.id, { content: "What is 6*7?" });
    expect(res.statusCode).toBe(200);
    const body = res.json();
    expect(body.run).toMatchObject({ status: "completed", stop_reason: "end_turn", steps: 2, provider, error: null });
    expect(body.output_text).toBe("6*7 = 42.");

    const history = await client().history(conv.id);
    expect(history.map((m) => m.role)).toEqual(["user", "assistant", "tool", "assistant"]);
    expect(history.map((m) => m.seq)).toEqual([1, 2, 3, 4]);
    expect(body.messages.map((m: any) => m.id)).toEqual(history.map((m) => m.id));
    const call = history[1].content.find((b: any) => b.type === "tool_call");
    expect(history[1].content[0]).toEqual({ type: "text", text: "Let me compute." });
    expect(call).toMatchObject({ name: "calculate", input: { expression: "6*7" } });
    expect(call.id).toMatch(provider === "anthropic" ? /^toolu_/ : /^call_/);
    expect(history[2].content).toEqual([
      {
        type: "tool_result",
        tool_call_id: call.id,
        name: "calculate",
        content: JSON.stringify({ expression: "6*7", result: 42 }),
        is_error: false,
      },
    ]);
    // The second model call carried the call and its result, ids verbatim.
    expect(f.llm.requests).toHaveLength(2);
    expect(toolCallIdsIn(f.llm.requests[1]!)).toEqual([call.id]);
    expect(toolResultsIn(f.llm.requests[1]!)).toEqual([expect.objectContaining({ id: call.id, isError: false })]);
  });

  test("two tool calls in one response are both executed and both results reach the next call", async () => {
    const conv = await newConversation();
    f.llm.script(
      {
        toolCalls: [
          { name: "get_current_time", input: { timezone: "Asia/Tokyo" } },
          { name: "calculate", input: { expression: "2^10" } },
        ],
      },
      { text: "Done." },
    );
    const body = (await client().send(conv.id, { content: "Time in Tokyo and 2^10?" })).json();
    expect(body.run.status).toBe("completed");
    const calls = body.messages[1].content.filter((b: any) => b.type === "tool_call");
    expect(calls).toHaveLength(2);
    const results = toolResultsIn(f.llm.requests[1]!);
    expect(results.map((r) => r.id)).toEqual(calls.map((c: any) => c.id));
    expect(results[0]!.content).toContain("Asia/Tokyo");
    expect(JSON.parse(results[1]!.content)).toEqual({ expression: "2^10", result: 1024 });
    expect(body.messages.map((m: any) => m.role)).toEqual(["user", "assistant", "tool", "tool", "assistant"]);
  });

  test("a dependent chain (search, then get by the id found, then answer) takes three model calls", async () => {
    const conv = await newConversation();
    // The fake reads what the tools returned, as a model would.
    f.llm.respond = (req) => {
      const results = toolResultsIn(req);
      if (results.length === 0) return { toolCalls: [{ name: "search_orders", input: { customer: "Turing" } }] };
      if (results.length === 1) {
        const { ids } = JSON.parse(results[0]!.content);
        return { toolCalls: [{ name: "get_order", input: { id: ids[0] } }] };
      }
      const order = JSON.parse(results[1]!.content);
      return { text: `Order ${order.id} totals ${order.total}.` };
    };
    const body = (await client().send(conv.id, { content: "What did Turing order?" })).json();
    expect(f.llm.requests).toHaveLength(3);
    expect(body.run).toMatchObject({ status: "completed", steps: 3 });
    expect(body.output_text).toBe(`Order ${ORDERS[1]!.id} totals ${ORDERS[1]!.total}.`);
  });

  test("every tool failure reaches the model as a tool result it can act on, and the run completes", async () => {
    const conv = await newConversation({ tools: ["calculate", "explode", "slow", "get_order"] });
    f.llm.script(
      {
        toolCalls: [
          { name: "no_such_tool", input: {} },
          { name: "calculate", rawArguments: '{"expression": "1+' },
          { name: "calculate", input: { expression: 12 } },
          { name: "explode", input: {} },
          { name: "slow", input: {} },
          { name: "get_order", input: { id: "ord_missing" } },
        ],
      },
      { text: "Sorry, everything failed." },
    );
    const body = (await client().send(conv.id, { content: "Try everything." })).json();
    expect(body.run.status).toBe("completed");
    const results = body.messages.filter((m: any) => m.role === "tool").map((m: any) => m.content[0]);
    expect(results).toHaveLength(6);
    expect(results.every((r: any) => r.is_error)).toBe(true);
    const [unknown, badJson, badSchema, thrown, timedOut, rangeError] = results.map((r: any) => r.content);
    expect(unknown).toMatch(/no_such_tool/);
    expect(unknown).toMatch(/calculate/); // lists what is available
    expect(badJson).toMatch(/not valid JSON/i);
    expect(badSchema).toMatch(/expression/);
    expect(badSchema).toMatch(/string/);
    expect(thrown).toMatch(/TypeError: cannot read properties of undefined/);
    expect(timedOut).toMatch(/timed out after 0\.1 s/);
    expect(rangeError).toMatch(/RangeError: no order ord_missing/);
    // …and the model saw all six, ids matched.
    const wire = toolResultsIn(f.llm.requests[1]!);
    expect(wire.map((r) => r.id)).toEqual(results.map((r: any) => r.tool_call_id));
    if (provider === "anthropic") expect(wire.every((r) => r.isError)).toBe(true);
  });

  test("the assistant message is saved before its tools run, and each result as soon as it exists", async () => {
    const conv = await newConversation({ tools: ["peek_history"] });
    conversationUnderTest = conv.id;
    peeks.length = 0;
    f.llm.script(
      {
        text: "Peeking twice.",
        toolCalls: [
          { id: "call_first_peek_000000001", name: "peek_history" },
          { id: "call_second_peek_00000002", name: "peek_history" },
        ],
      },
      { text: "Done." },
    );
    const body = (await client().send(conv.id, { content: "Peek." })).json();
    expect(body.run.status).toBe("completed");
    expect(peeks).toEqual([
      { roles: ["user", "assistant"], toolResultIds: [] },
      { roles: ["user", "assistant", "tool"], toolResultIds: ["call_first_peek_000000001"] },
    ]);
  });

  test("max_steps without a grace turn ends the run incomplete with a valid history", async () => {
    const conv = await newConversation();
    f.llm.respond = () => ({ toolCalls: [{ name: "calculate", input: { expression: "1+1" } }] });
    const body = (
      await client().send(conv.id, { content: "Loop forever.", budget: { max_steps: 2, grace_turn: false } })
    ).json();
    expect(body.run).toMatchObject({
      status: "incomplete",
      stop_reason: "max_steps",
      steps: 2,
      budget_exceeded: "steps",
    });
    expect(f.llm.requests).toHaveLength(2);
    expect(body.messages.map((m: any) => m.role)).toEqual(["user", "assistant", "tool", "assistant", "tool"]);
  });

  test("max_steps above the server's limit is capped by MAX_STEPS_LIMIT", async () => {
    const conv = await newConversation();
    f.llm.respond = () => ({ toolCalls: [{ name: "calculate", input: { expression: "1+1" } }] });
    const body = (await client().send(conv.id, { content: "Loop.", max_steps: 10_000 })).json();
    expect(body.run.steps).toBe(f.loopd.config.runs.maxStepsLimit);
  });

  test("max_tokens ends the run incomplete and keeps the partial text", async () => {
    const conv = await newConversation();
    f.llm.script({ text: "The answer begins like th", stop: "max_tokens" });
    const body = (await client().send(conv.id, { content: "Write a lot." })).json();
    expect(body.run).toMatchObject({ status: "incomplete", stop_reason: "max_tokens" });
    expect(body.output_text).toBe("The answer begins like th");
    expect((await client().history(conv.id)).at(-1).content).toEqual([
      { type: "text", text: "The answer begins like th" },
    ]);
  });

  const blocked = provider === "anthropic" ? ("refusal" as const) : ("content_filter" as const);
  test(`${blocked} ends the run incomplete with that stop reason`, async () => {
    const conv = await newConversation();
    f.llm.script({ text: "I can't help with that.", stop: blocked });
    const body = (await client().send(conv.id, { content: "Something bad." })).json();
    expect(body.run).toMatchObject({ status: "incomplete", stop_reason: blocked });
  });

  test("a response cut off by the context window ends the run incomplete", async () => {
    const conv = await newConversation();
    f.llm.script({ text: "So far", stop: "context_window_exceeded" });
    const body = (await client().send(conv.id, { content: "Go on." })).json();
    expect(body.run).toMatchObject({ status: "incomplete", stop_reason: "max_tokens" });
    expect(body.output_text).toBe("So far");
  });

  test("tool calls in a cut-off response are answered as not executed, so the history stays valid", async () => {
    const conv = await newConversation();
    f.llm.script({
      text: "Calling",
      toolCalls: [{ name: "calculate", input: { expression: "1+" } }],
      stop: "max_tokens",
    });
    const body = (await client().send(conv.id, { content: "Go." })).json();
    expect(body.run).toMatchObject({ status: "incomplete", stop_reason: "max_tokens" });
    expect(body.messages.map((m: any) => m.role)).toEqual(["user", "assistant", "tool"]);
    expect(body.messages[2].content[0]).toMatchObject({
      is_error: true,
      content: expect.stringMatching(/not executed/),
    });
    f.llm.script({ text: "ok" });
    expect((await client().send(conv.id, { content: "Again." })).json().run.status).toBe("completed");
  });

  test("a 429 then success is retried by the SDK and the run completes", async () => {
    const conv = await newConversation();
    f.llm.script({ status: 429, message: "rate limited" }, { text: "Hello!" });
    const body = (await client().send(conv.id, { content: "Hi" })).json();
    expect(f.llm.requests).toHaveLength(2);
    expect(body.run.status).toBe("completed");
    expect(body.output_text).toBe("Hello!");
  });

  test("a persistent 500 fails the run with provider_unavailable, and the next message succeeds", async () => {
    const conv = await newConversation();
    const down = { status: 500, message: "upstream exploded" };
    f.llm.script(down, down, down, down);
    const failed = (await client().send(conv.id, { content: "Hi" })).json();
    expect(failed.run).toMatchObject({ status: "failed", stop_reason: "error" });
    expect(failed.run.error.code).toBe("provider_unavailable");
    expect(failed.run.error.message).toContain("upstream exploded");
    expect(f.llm.requests).toHaveLength(4); // loopd's four attempts (MODEL_MAX_ATTEMPTS); the SDK makes none

    f.llm.script({ text: "Back again." });
    const ok = (await client().send(conv.id, { content: "Hi again" })).json();
    expect(ok.run.status).toBe("completed");
    expect(userTextsIn(f.llm.requests.at(-1)!)).toEqual(["Hi", "Hi again"]);
  });

  test("after a restart on the same database the model receives the full prior history, ids intact", async () => {
    const conv = await newConversation();
    f.llm.script({ toolCalls: [{ name: "calculate", input: { expression: "3*3" } }] }, { text: "9" });
    const first = (await client().send(conv.id, { content: "3*3?" })).json();
    const callId = first.messages[1].content[0].id;

    await f.restart();

    f.llm.reset();
    f.llm.script({ text: "Still 9." });
    const second = (await client().send(conv.id, { content: "And again?" })).json();
    expect(second.run.status).toBe("completed");
    const req = f.llm.requests[0]!;
    expect(toolCallIdsIn(req)).toEqual([callId]);
    expect(toolResultsIn(req).map((r) => r.id)).toEqual([callId]);
    expect(userTextsIn(req)).toEqual(["3*3?", "And again?"]);
    expect((await client().history(conv.id)).map((m) => m.seq)).toEqual([1, 2, 3, 4, 5, 6]);
  });

  test("a tool call left without a result (as after a crash) is repaired before the next model call", async () => {
    const conv = await newConversation();
    const store = createStore(f.database);
    const orphanId = provider === "anthropic" ? "toolu_01CrashedCrashedCrashed" : "call_CrashedCrashedCrashed1";
    await store.transaction((tx) =>
      tx.messages.append({
        conversationId: conv.id,
        runId: null,
        items: [
          { role: "user", content: [{ type: "text", text: "Start something." }] },
          {
            role: "assistant",
            content: [{ type: "tool_call", id: orphanId, name: "calculate", input: { expression: "1" } }],
          },
        ],
      }),
    );
    f.llm.script({ text: "Recovered." });
    const body = (await client().send(conv.id, { content: "Are you there?" })).json();
    expect(body.run.status).toBe("completed"); // the fake answers 400 to an orphan
    const results = toolResultsIn(f.llm.requests[0]!);
    expect(results).toEqual([expect.objectContaining({ id: orphanId })]);
    expect(results[0]!.content).toContain("interrupted");
    const history = await client().history(conv.id);
    expect(history.map((m) => m.role)).toEqual(["user", "assistant", "tool", "user", "assistant"]);
  });

  test("usage is summed over every step and stored on the run", async () => {
    const conv = await newConversation();
    f.llm.script(
      {
        toolCalls: [{ name: "calculate", input: { expression: "1+2" } }],
        usage: { input: 100, output: 10, cacheRead: 5, cacheWrite: 7 },
      },
      { text: "3", usage: { input: 200, output: 20, cacheRead: 50, cacheWrite: 0 } },
    );
    const body = (await client().send(conv.id, { content: "1+2?" })).json();
    // At list prices per million tokens: claude-sonnet-4-6 3 in, 15 out, 0.30 cache read, 3.75 cache write;
    // gpt-4o-mini 0.15 in, 0.60 out, 0.075 cached (OpenAI reports no cache writes).
    const expected =
      provider === "anthropic"
        ? {
            input_tokens: 300,
            output_tokens: 30,
            cache_read_tokens: 55,
            cache_write_tokens: 7,
            cost_usd: expect.closeTo((300 * 3 + 30 * 15 + 55 * 0.3 + 7 * 3.75) / 1e6, 12),
          }
        : {
            input_tokens: 300,
            output_tokens: 30,
            cache_read_tokens: 55,
            cache_write_tokens: 0,
            cost_usd: expect.closeTo((300 * 0.15 + 30 * 0.6 + 55 * 0.075) / 1e6, 12),
          };
    expect(body.run.model).toBe(provider === "anthropic" ? "claude-sonnet-4-6" : "gpt-4o-mini");
    expect(body.run.usage).toEqual(expected);
    const stored = await f.loopd.app.inject({ method: "GET", url: `/conversations/${conv.id}/runs/${body.run.id}` });
    expect(stored.json().usage).toEqual(expected);
  });

  test("tool_choice is mapped to the provider's form on the first call only", async () => {
    const conv = await newConversation();
    f.llm.script({ toolCalls: [{ name: "calculate", input: { expression: "1" } }] }, { text: "1" });
    await client().send(conv.id, { content: "x", tool_choice: { name: "calculate" } });
    const [first, second] = f.llm.requests.map((r) => r.body.tool_choice);
    if (provider === "anthropic") {
      expect(first).toEqual({ type: "tool", name: "calculate" });
      expect(second).toEqual({ type: "auto" });
    } else {
      expect(first).toEqual({ type: "function", function: { name: "calculate" } });
      expect(second).toBe("auto");
    }
  });
});

test("Anthropic pause_turn continues the turn with another model call", async () => {
  const conv = await api(f.loopd.app).createConversation({ provider: "anthropic" });
  f.llm.script({ text: "Searching the web…", stop: "pause_turn" }, { text: "Found it." });
  const body = (await api(f.loopd.app).send(conv.id, { content: "Look it up." })).json();
  expect(body.run).toMatchObject({ status: "completed", steps: 2 });
  expect(f.llm.requests).toHaveLength(2);
  expect(body.output_text).toBe("Found it.");
});
