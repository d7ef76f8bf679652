import { describe, expect, test, vi } from "vitest";
import { schemaCheckPool } from "../../src/json-schema/check-user-schema.js";
import { api } from "../support/helpers/api.js";
import { rowCounts } from "../support/helpers/row-counts.js";
import { collectEvents } from "../support/helpers/sse-client.js";
import { useLoopd } from "../support/helpers/use-loopd.js";
import { toolResultsIn, userTextsIn } from "../support/helpers/wire.js";
import type { RecordedRequest } from "../support/fake-llm/server.js";
import { testTools } from "../support/helpers/test-tools.js";

const f = useLoopd({ tools: testTools(), listen: true });
const client = () => api(f.loopd.app);

/** Whether a recorded model request disabled tools (each API says it its own way). */
const toolsDisabled = (req: RecordedRequest) => {
  const choice = req.body.tool_choice;
  return req.api === "anthropic" ? (choice as { type?: string } | undefined)?.type === "none" : choice === "none";
};

describe.each(["anthropic", "openai"] as const)("a run's budget through %s", (provider) => {
  const newConversation = (extra: Record<string, unknown> = {}) => client().createConversation({ provider, ...extra });
  /** A model that wants one more tool call every time, and answers in text when tools are disabled. */
  const greedyModel = (usage: { input?: number; output?: number } = { input: 1000, output: 100 }) => {
    f.llm.respond = (req) =>
      toolsDisabled(req)
        ? { text: "Here is what I have.", usage }
        : { toolCalls: [{ name: "calculate", input: { expression: "1+1" } }], usage };
  };

  /** The grace turn as the model saw it: the last request has tools disabled (still declared) and the notice as the newest user text. */
  function expectGraceTurn(notice: RegExp) {
    const last = f.llm.requests.at(-1)!;
    expect(toolsDisabled(last)).toBe(true);
    expect((last.body.tools as unknown[]).length).toBeGreaterThan(0);
    expect(userTextsIn(last).at(-1)).toMatch(notice);
    for (const earlier of f.llm.requests.slice(0, -1)) expect(toolsDisabled(earlier)).toBe(false);
  }

  async function expectHistoryStillValid(convId: string) {
    const before = f.llm.requests.length;
    f.llm.respond = null;
    f.llm.script({ text: "Fine." });
    const next = (await client().send(convId, { content: "Anything else?" })).json();
    expect(next.run.status).toBe("completed");
    // The fake rejects a malformed history as the real APIs do; every call has its result.
    const sent = f.llm.requests[before]!;
    expect(toolResultsIn(sent).length).toBeGreaterThan(0);
  }

  test("steps: the grace call is the last of max_steps, with tools disabled and the notice", async () => {
    const conv = await newConversation();
    greedyModel();
    const body = (await client().send(conv.id, { content: "Loop.", budget: { max_steps: 3 } })).json();
    expect(body.run).toMatchObject({
      status: "incomplete",
      stop_reason: "max_steps",
      budget_exceeded: "steps",
      steps: 3,
    });
    expect(f.llm.requests).toHaveLength(3);
    expectGraceTurn(/step budget reached/);
    expect(body.output_text).toBe("Here is what I have.");
    const notice = body.messages.find((m: any) => m.kind === "notice");
    expect(notice).toMatchObject({ role: "user", kind: "notice" });
    expect(body.messages.map((m: any) => m.role)).toEqual([
      "user",
      "assistant",
      "tool",
      "assistant",
      "tool",
      "user",
      "assistant",
    ]);
    // The notice is in the history as written, marked as loopd's own.
    expect((await client().history(conv.id)).filter((m) => m.kind === "notice")).toHaveLength(1);
    await expectHistoryStillValid(conv.id);
  });

  test("tokens: calls are made while each fits with room for a grace call, the last is the grace call, and the run stays within max_tokens", async () => {
    const conv = await newConversation();
    greedyModel({ input: 1000, output: 100 });
    const body = (await client().send(conv.id, { content: "Loop.", budget: { max_tokens: 8000 } })).json();
    // 1,100 tokens a call (the fake reports 1,000 input whatever it is sent); the estimate learns it after the first.
    expect(body.run).toMatchObject({ status: "incomplete", stop_reason: "budget", budget_exceeded: "tokens" });
    expect(body.run.steps).toBeGreaterThanOrEqual(3);
    expect(body.run.usage.input_tokens + body.run.usage.output_tokens).toBeLessThanOrEqual(8000);
    expectGraceTurn(/token budget reached/);
    await expectHistoryStillValid(conv.id);
  });

  test("cost: the run stops before what it costs would pass max_cost_usd, and the cost is shown per run and per conversation", async () => {
    const conv = await newConversation();
    // Only output is scripted: the input is what the fake counts of each request, as a real API would.
    greedyModel({ output: 50 });
    const input = (await f.loopd.app.inject({ method: "GET", url: `/conversations/${conv.id}/context` })).json()
      .estimated_input_tokens as number;
    // claude-sonnet-4-6: $3/M input, $15/M output; gpt-4o-mini: $0.15/M, $0.60/M. About five calls' worth.
    const perCall = provider === "anthropic" ? (input * 3 + 50 * 15) / 1e6 : (input * 0.15 + 50 * 0.6) / 1e6;
    const max = perCall * 5;
    const body = (await client().send(conv.id, { content: "Loop.", budget: { max_cost_usd: max } })).json();
    expect(body.run).toMatchObject({ status: "incomplete", stop_reason: "budget", budget_exceeded: "cost" });
    expect(body.run.steps).toBeGreaterThanOrEqual(2);
    expect(body.run.usage.cost_usd).toBeLessThanOrEqual(max);
    expectGraceTurn(/cost budget reached/);
    const conversation = (await f.loopd.app.inject({ method: "GET", url: `/conversations/${conv.id}` })).json();
    expect(conversation.usage.cost_usd).toBeCloseTo(body.run.usage.cost_usd, 9);
    expect(conversation.usage.input_tokens).toBe(body.run.usage.input_tokens);
  });

  test("grace_turn: false ends the run at once, without a last call", async () => {
    const conv = await newConversation();
    greedyModel();
    // 1,100 tokens a call: two fit in 3,000, a third would not.
    const body = (
      await client().send(conv.id, { content: "Loop.", budget: { max_tokens: 3000, grace_turn: false } })
    ).json();
    expect(body.run).toMatchObject({
      status: "incomplete",
      stop_reason: "budget",
      budget_exceeded: "tokens",
      steps: 2,
    });
    expect(f.llm.requests.every((r) => !toolsDisabled(r))).toBe(true);
    expect(body.messages.some((m: any) => m.kind === "notice")).toBe(false);
    await expectHistoryStillValid(conv.id);
  });

  test("seconds: a slow tool is stopped at the deadline with a result saying so, then the grace turn", async () => {
    const conv = await newConversation();
    f.llm.respond = (req) =>
      toolsDisabled(req) ? { text: "Out of time." } : { toolCalls: [{ name: "wait_for_abort", input: {} }] };
    const body = (await client().send(conv.id, { content: "Wait.", budget: { max_seconds: 0.5 } })).json();
    expect(body.run).toMatchObject({
      status: "incomplete",
      stop_reason: "budget",
      budget_exceeded: "seconds",
      steps: 2,
    });
    const result = body.messages.find((m: any) => m.role === "tool").content[0];
    expect(result).toMatchObject({
      name: "wait_for_abort",
      is_error: true,
      content: expect.stringContaining("time budget ran out"),
    });
    expectGraceTurn(/time budget reached/);
    await expectHistoryStillValid(conv.id);
  });

  test("seconds: a slow model stream is stopped at the deadline", async () => {
    const conv = await newConversation();
    f.llm.script({ text: "one two three four five six seven eight nine ten", chunkDelayMs: 200 });
    // 10 words at 200 ms each: cut off after the first few.
    const body = (await client().send(conv.id, { content: "Talk slowly.", budget: { max_seconds: 1.2 } })).json();
    expect(body.run).toMatchObject({
      status: "incomplete",
      stop_reason: "budget",
      budget_exceeded: "seconds",
      steps: 0,
    });
    // Cut off mid-answer, the call still counts what it streamed, never 0.
    expect(body.run.usage.output_tokens).toBeGreaterThan(0);
    expect(body.run.usage.cost_usd).toBeGreaterThan(0);
    // Anthropic reports the input tokens as the stream starts: they count too.
    if (provider === "anthropic") expect(body.run.usage.input_tokens).toBeGreaterThan(0);
    f.llm.script({ text: "Quick." });
    expect((await client().send(conv.id, { content: "Again" })).json().run.status).toBe("completed");
  });
});

describe("budget values are checked", () => {
  test("negative, zero, non-numbers and unknown fields are 400s naming the field, and change nothing", async () => {
    const conv = await client().createConversation({ provider: "openai" });
    const before = await rowCounts(f.database);
    for (const [budget, field] of [
      [{ max_tokens: -1 }, "body.budget.max_tokens"],
      [{ max_steps: 0 }, "body.budget.max_steps"],
      [{ max_seconds: "10" }, "body.budget.max_seconds"],
      [{ max_cost_usd: 0 }, "body.budget.max_cost_usd"],
      [{ grace_turn: "no" }, "body.budget.grace_turn"],
      [{ max_dollars: 1 }, "body.budget.max_dollars"],
    ] as const) {
      const res = await client().send(conv.id, { content: "hi", budget });
      expect(res.statusCode, JSON.stringify(budget)).toBe(400);
      expect(res.json().error.details.field).toBe(field);
    }
    const unpriced = await client().send(conv.id, {
      content: "hi",
      model: "my-local-model",
      budget: { max_cost_usd: 1 },
    });
    expect(unpriced.statusCode).toBe(400);
    expect(unpriced.json().error).toMatchObject({
      code: "invalid_request",
      details: { field: "body.budget.max_cost_usd", model: "my-local-model" },
    });
    expect(await rowCounts(f.database)).toEqual(before);
  });

  test("a conversation's budget is the default of its runs, and a request's own wins field by field", async () => {
    const conv = await client().createConversation({ provider: "openai", budget: { max_steps: 2, grace_turn: false } });
    expect(conv.budget).toEqual({ max_steps: 2, grace_turn: false });
    f.llm.respond = () => ({ toolCalls: [{ name: "calculate", input: { expression: "1+1" } }] });
    const body = (await client().send(conv.id, { content: "Loop." })).json();
    expect(body.run).toMatchObject({ stop_reason: "max_steps", steps: 2 });
    f.llm.requests.length = 0;
    const more = (await client().send(conv.id, { content: "Loop.", budget: { max_steps: 3 } })).json();
    expect(more.run).toMatchObject({ stop_reason: "max_steps", steps: 3 });
    expect(more.messages.some((m: any) => m.kind === "notice")).toBe(false);
  });
});

describe.each(["anthropic", "openai"] as const)("the finish tool through %s", (provider) => {
  const RESULT_SCHEMA = { type: "object", properties: { total: { type: "number" } }, required: ["total"] };
  const newConversation = () => client().createConversation({ provider });
  const toolNames = (req: RecordedRequest) =>
    (req.body.tools as { name?: string; function?: { name: string } }[]).map((t) => t.name ?? t.function!.name);

  test("a valid call completes the run with its result; its call is answered and no further model call is made", async () => {
    const conv = await newConversation();
    f.llm.script({
      toolCalls: [
        { name: "finish", input: { summary: "Added it up.", confidence: 0.9, result: { total: 3 } } },
        { name: "calculate", input: { expression: "1+2" } },
      ],
    });
    const body = (
      await client().send(conv.id, {
        content: "Add 1 and 2.",
        finish: { result_schema: RESULT_SCHEMA },
        tool_choice: { name: "finish" },
      })
    ).json();
    expect(body.run).toMatchObject({
      status: "completed",
      stop_reason: "finish",
      steps: 1,
      result: { summary: "Added it up.", confidence: 0.9, result: { total: 3 } },
    });
    expect(f.llm.requests).toHaveLength(1);
    expect(toolNames(f.llm.requests[0]!)).toContain("finish");
    const results = body.messages.filter((m: any) => m.role === "tool").map((m: any) => m.content[0]);
    expect(results).toEqual([
      expect.objectContaining({ name: "finish", content: "Finished.", is_error: false }),
      expect.objectContaining({ name: "calculate", is_error: true, content: expect.stringContaining("not executed") }),
    ]);
    expect(
      (await f.loopd.app.inject({ method: "GET", url: `/conversations/${conv.id}/runs/${body.run.id}` })).json().result,
    ).toEqual(body.run.result);
    // Replayed, the log shows the run as it began (no result yet) and as it ended.
    const events = await collectEvents(
      await fetch(`${f.loopd.url}/conversations/${conv.id}/runs/${body.run.id}/events`),
    );
    expect(events[0]).toMatchObject({ event: "run.created", data: { run: { status: "running", result: null } } });
    expect(events.at(-1)).toMatchObject({
      event: "run.completed",
      data: { run: { stop_reason: "finish", result: body.run.result } },
    });
    f.llm.script({ text: "Sure." });
    expect((await client().send(conv.id, { content: "Thanks" })).json().run).not.toHaveProperty("result");
  });

  test("an invalid call gets an error naming what is wrong, and the model calls it again", async () => {
    const conv = await newConversation();
    f.llm.script(
      { toolCalls: [{ name: "finish", input: { summary: "Done.", confidence: 2, result: { total: "three" } } }] },
      { toolCalls: [{ name: "finish", input: { summary: "Done.", result: { total: 3 } } }] },
    );
    const body = (await client().send(conv.id, { content: "Add.", finish: { result_schema: RESULT_SCHEMA } })).json();
    expect(body.run).toMatchObject({
      status: "completed",
      stop_reason: "finish",
      steps: 2,
      result: { summary: "Done.", confidence: null, result: { total: 3 } },
    });
    const [error] = toolResultsIn(f.llm.requests[1]!);
    expect(error!.isError).toBe(true);
    expect(error!.content).toContain("result.total");
    expect(error!.content).toContain("confidence");
  });

  test("a plain answer gets one nudge; a second plain answer completes the run with result null", async () => {
    const conv = await newConversation();
    f.llm.script({ text: "I think it is 3." }, { text: "It is 3." });
    const body = (await client().send(conv.id, { content: "Add.", finish: {} })).json();
    expect(body.run).toMatchObject({ status: "completed", stop_reason: "end_turn", steps: 2, result: null });
    expect(f.llm.requests).toHaveLength(2);
    expect(userTextsIn(f.llm.requests[1]!).at(-1)).toMatch(/call `finish`/);
    expect(body.messages.map((m: any) => [m.role, m.kind ?? null])).toEqual([
      ["user", null],
      ["assistant", null],
      ["user", "notice"],
      ["assistant", null],
    ]);
  });

  test("without finish the model gets no finish tool", async () => {
    const conv = await newConversation();
    f.llm.script({ text: "Hi." });
    const body = (await client().send(conv.id, { content: "Hello" })).json();
    expect(toolNames(f.llm.requests[0]!)).not.toContain("finish");
    expect(body.run).not.toHaveProperty("result");
  });
});

test("a result_schema that cannot be checked is a 400", async () => {
  const conv = await client().createConversation({ provider: "openai" });
  const res = await client().send(conv.id, {
    content: "x",
    finish: { result_schema: { type: "object", properties: { a: { $ref: "#/nowhere" } } } },
  });
  expect(res.statusCode).toBe(400);
  expect(res.json().error.details.field).toBe("body.finish.result_schema");
});

test("a result_schema with an $id is the request's own: its runs finish, run after run, and another request cannot $ref it", async () => {
  const conv = await client().createConversation({ provider: "openai" });
  const schema = {
    $id: "urn:client-a:total",
    type: "object",
    properties: { total: { type: "number" } },
    required: ["total"],
  };
  for (const total of [1, 2]) {
    f.llm.script({ toolCalls: [{ name: "finish", input: { summary: "Done.", result: { total } } }] });
    const res = await client().send(conv.id, { content: "Add.", finish: { result_schema: schema } });
    expect(res.json().run, res.body).toMatchObject({
      status: "completed",
      stop_reason: "finish",
      result: { result: { total } },
    });
  }
  const res = await f.loopd.app.inject({
    method: "POST",
    url: "/conversations",
    payload: { finish: { result_schema: { $ref: "urn:client-a:total" } } },
  });
  expect(res.statusCode, res.body).toBe(400);
});

test("a run cancelled while its finish call is being checked ends cancelled, the check stopped", async () => {
  // 40 levels that each refer to the next twice: the check runs until it is stopped.
  const $defs: Record<string, unknown> = {};
  for (let i = 0; i < 40; i++)
    $defs[`d${i}`] = { allOf: [{ $ref: `#/$defs/d${i + 1}` }, { $ref: `#/$defs/d${i + 1}` }] };
  $defs.d40 = { type: "number" };
  const conv = await client().createConversation({
    provider: "openai",
    finish: { result_schema: { $ref: "#/$defs/d0", $defs } },
  });
  f.llm.script({ toolCalls: [{ name: "finish", input: { summary: "Done.", result: 1 } }] });
  const sent = client().send(conv.id, { content: "Finish." });
  await vi.waitFor(() => expect(schemaCheckPool().running).toBe(1), { timeout: 10_000, interval: 20 });
  const runId = (await f.loopd.services.store.runs.list({ conversationId: conv.id, limit: 1 })).rows[0]!.id;
  expect(
    (await f.loopd.app.inject({ method: "POST", url: `/conversations/${conv.id}/runs/${runId}/cancel` })).statusCode,
  ).toBe(200);
  expect((await sent).json().run).toMatchObject({ status: "cancelled", stop_reason: "cancelled" });
  expect(schemaCheckPool().running).toBe(0);
});
