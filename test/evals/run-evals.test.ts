import { beforeEach, describe, expect, test } from "vitest";
import { rowOf } from "../../src/evals/eval-summary.js";
import { RECORDED_MISS } from "../../src/evals/recorded-tools.js";
import { runEvals } from "../../src/evals/run-evals.js";
import type { EvalCase } from "../../src/evals/eval-case.js";
import type { FakeTurn } from "../support/fake-llm/server.js";
import { api } from "../support/helpers/api.js";
import { useLoopd } from "../support/helpers/use-loopd.js";
import { evalTools, holds, lookups, recordCase, respondByCase, toolResultsOf } from "./eval-fixtures.js";
import { b64, png } from "../support/helpers/test-images.js";

const f = useLoopd({ tools: evalTools() });

/** The recorded run: two tools, then an answer. */
const TWO_TOOLS: FakeTurn[] = [
  { toolCalls: [{ name: "lookup_order", input: { number: "A-17" } }] },
  { toolCalls: [{ name: "get_current_time", input: { timezone: "Asia/Tokyo" } }] },
  { text: "Order A-17 has shipped; it is evening in Tokyo." },
];

const evals = (cases: EvalCase[], options: Partial<Parameters<typeof runEvals>[0]> = {}) =>
  runEvals({
    cases: cases.map((evalCase, i) => ({ file: `case-${i}.json`, evalCase })),
    config: f.loopd.config,
    providers: f.loopd.services.providers,
    tools: evalTools(),
    ...options,
  });

beforeEach(() => {
  lookups.length = 0;
});

describe.each(["anthropic", "openai"] as const)("a case from a recorded two-tool run on %s", (provider) => {
  test("passes against the same model: the recorded results answer its calls, and no tool really runs", async () => {
    const { evalCase, run } = await recordCase(f, {
      provider,
      content: "Where is order A-17, and what time is it in Tokyo?",
      turns: TWO_TOOLS,
    });
    expect(lookups).toHaveLength(1);
    lookups.length = 0;
    f.llm.script(...TWO_TOOLS);
    const { results, summary } = await evals([evalCase]);
    expect(results[0]).toMatchObject({
      pass: true,
      failures: [],
      status: "completed",
      steps: 3,
      provider,
      model: run.model,
      tool_calls: ["lookup_order", "get_current_time"],
    });
    // Tokens as the fake counts them: the same answers, and requests that differ only in the tool calls' random ids.
    expect(results[0]!.usage).toMatchObject({
      output_tokens: run.usage.output_tokens,
      input_tokens: expect.closeTo(run.usage.input_tokens, -2),
    });
    expect(summary).toMatchObject({
      cases: 1,
      passed: 1,
      failed: 0,
      pass_rate: 1,
      input_tokens: results[0]!.usage!.input_tokens,
      output_tokens: run.usage.output_tokens,
    });
    // The model was sent the recorded results (the time of the recording, not now), in the provider's wire format.
    expect(f.llm.requests.map((r) => r.api)).toEqual([provider, provider, provider]);
    expect(toolResultsOf(f.llm.requests[2]!)).toEqual(
      evalCase.recorded.map((r) => ({ content: r.content, is_error: false })),
    );
    expect(lookups).toEqual([]);
  });

  test("a model that behaves otherwise fails the expectations it breaks, and its row says what", async () => {
    const { evalCase } = await recordCase(f, {
      provider,
      content: "Where is order A-17, and the time?",
      turns: TWO_TOOLS,
    });
    f.llm.script(TWO_TOOLS[0]!, { text: "It has shipped." });
    const { results } = await evals([evalCase]);
    expect(results[0]).toMatchObject({ pass: false, steps: 2, tool_calls: ["lookup_order"] });
    expect(results[0]!.failures).toEqual([
      "tool_calls: expected [lookup_order, get_current_time], got [lookup_order]",
      'final_text: does not contain "Order A-17 has shipped; it is evening in Tokyo." (it is "It has shipped.")',
    ]);
    const row = rowOf(results[0]!);
    expect(row).toMatch(/^FAIL +2 /);
    expect(row).toContain("\n      tool_calls: expected [lookup_order, get_current_time], got [lookup_order]");
  });
});

test("a call no recorded result answers gets the recorded miss, as an error result, and the tool does not run; --live-tools runs it", async () => {
  const { evalCase } = await recordCase(f, {
    provider: "anthropic",
    content: "Order A-17?",
    turns: [TWO_TOOLS[0]!, { text: "Shipped." }],
  });
  lookups.length = 0;
  const otherOrder: FakeTurn = { toolCalls: [{ name: "lookup_order", input: { number: "B-2" } }] };
  f.llm.script(otherOrder, { text: "Shipped." });
  const recorded = await evals([evalCase]);
  expect(toolResultsOf(f.llm.requests[1]!)).toEqual([{ content: RECORDED_MISS, is_error: true }]);
  expect(lookups).toEqual([]);
  expect(recorded.results[0]).toMatchObject({ pass: true, tool_calls: ["lookup_order"] });

  f.llm.reset();
  f.llm.script(otherOrder, { text: "Shipped." });
  await evals([evalCase], { liveTools: true });
  expect(lookups).toEqual([{ number: "B-2" }]);
  expect(toolResultsOf(f.llm.requests[1]!)).toEqual([
    { content: JSON.stringify({ number: "B-2", status: "shipped", live: true }), is_error: false },
  ]);
});

test("the recorded result matches the call's input whatever its keys' order", async () => {
  const { evalCase } = await recordCase(f, {
    provider: "openai",
    content: "Tokyo time?",
    turns: [{ toolCalls: [{ name: "get_current_time", input: { timezone: "Asia/Tokyo" } }] }, { text: "Late." }],
  });
  evalCase.recorded[0]!.input = { b: 1, a: { y: 2, x: 1 } };
  f.llm.script(
    { toolCalls: [{ name: "get_current_time", rawArguments: '{"a":{"x":1,"y":2},"b":1}' }] },
    { text: "Late." },
  );
  await evals([evalCase]);
  expect(toolResultsOf(f.llm.requests[1]!)).toEqual([{ content: evalCase.recorded[0]!.content, is_error: false }]);
});

test("cases run at once up to --concurrency, each scored on its own run", async () => {
  const names = ["one", "two", "three", "four"];
  const turnsOf = Object.fromEntries(
    names.map((n) => [n, [{ toolCalls: [{ name: "hold", input: { id: n } }] }, { text: `done ${n}` }] as FakeTurn[]]),
  );
  const cases = names.map((n): EvalCase => ({
    name: n,
    conversation: {
      system: null,
      provider: "openai",
      model: "gpt-test",
      tools: ["hold"],
      context: null,
      client_tools: null,
    },
    history: [],
    input: n,
    recorded: [],
    expect: { tool_calls: ["hold"], final_text: { regex: `^done ${n}$` } },
  }));
  f.llm.respond = respondByCase(turnsOf);
  Object.assign(holds, { inFlight: 0, most: 0, arrivals: [] });
  // Each call of `hold` waits for another: with cases one after the other, this would never end.
  const { results, summary } = await evals(cases, { liveTools: true, concurrency: 2 });
  expect(holds.most).toBe(2);
  expect(results.map((r) => [r.name, r.pass, r.final_text])).toEqual(names.map((n) => [n, true, `done ${n}`]));
  expect(summary).toMatchObject({ cases: 4, passed: 4, pass_rate: 1 });
});

test("a case whose provider cannot be called fails with the reason; the others run", async () => {
  const { evalCase } = await recordCase(f, {
    provider: "openai",
    content: "Order A-17?",
    turns: [TWO_TOOLS[0]!, { text: "Shipped." }],
  });
  const onAnthropic: EvalCase = {
    ...evalCase,
    name: "on anthropic",
    conversation: { ...evalCase.conversation, provider: "anthropic", model: "claude-test" },
  };
  f.llm.script(TWO_TOOLS[0]!, { text: "Shipped." });
  const { results, summary } = await evals([onAnthropic, evalCase], {
    canCall: (p) => (p === "anthropic" ? "no API key for anthropic: ANTHROPIC_API_KEY is not set" : true),
  });
  expect(results[0]).toMatchObject({
    name: "on anthropic",
    pass: false,
    failures: ["no API key for anthropic: ANTHROPIC_API_KEY is not set"],
    usage: null,
    steps: 0,
  });
  expect(results[1]).toMatchObject({ pass: true });
  expect(summary).toMatchObject({ cases: 2, passed: 1, pass_rate: 0.5 });
  expect(f.llm.requests.every((r) => r.api === "openai")).toBe(true);
});

test("a case from a run that ended with finish: the eval's run is offered finish with the schema, and its result is checked against it", async () => {
  const schema = { type: "object", properties: { total: { type: "number" } }, required: ["total"] };
  const finish = (result: unknown): FakeTurn => ({
    toolCalls: [{ name: "finish", input: { summary: "summed", result } }],
  });
  const { evalCase } = await recordCase(f, {
    provider: "openai",
    content: "Sum 6*7.",
    turns: [finish({ total: 42 })],
    settings: { finish: { result_schema: schema } },
  });
  expect(evalCase.expect).toMatchObject({ tool_calls: ["finish"], finish_result: schema });
  f.llm.script(finish({ total: 42 }));
  const passed = await evals([evalCase]);
  expect(passed.results[0]).toMatchObject({ pass: true, status: "completed", stop_reason: "finish" });
  expect(f.llm.requests[0]!.body.tools.map((t: { function: { name: string } }) => t.function.name)).toContain("finish");

  // A model that answers in text, even after the nudge, never reports a result.
  f.llm.reset();
  f.llm.script({ text: "42." }, { text: "It is 42." });
  const failed = await evals([evalCase]);
  expect(failed.results[0]!.failures).toEqual([
    "tool_calls: expected [finish], got []",
    "finish_result: the run did not end with a finish call",
    "max_steps: 2 steps, more than 1",
    // Two calls cost more than the one recorded, headroom and all.
    expect.stringMatching(/^max_cost_usd: \$[\d.]+, more than \$[\d.]+$/),
  ]);
});

test("a client tool's call is answered from the recording: the paused run gets the recorded output", async () => {
  const invoice = {
    name: "create_invoice",
    description: "Creates an invoice.",
    input_schema: { type: "object", properties: { amount: { type: "number" } }, required: ["amount"] },
  };
  const client = api(f.loopd.app);
  const conv = await client.createConversation({
    provider: "anthropic",
    tools: ["calculate"],
    client_tools: [invoice],
  });
  const turns: FakeTurn[] = [
    { toolCalls: [{ name: "create_invoice", input: { amount: 42 } }] },
    { text: "Invoice INV-42 is made." },
  ];
  f.llm.script(...turns);
  const paused = (await client.send(conv.id, { content: "Invoice 42 euros." })).json();
  expect(paused.run.status).toBe("requires_action");
  const callId = paused.run.required_action.tool_calls[0].tool_call_id;
  const answered = await f.loopd.app.inject({
    method: "POST",
    url: `/conversations/${conv.id}/runs/${paused.run.id}/actions`,
    payload: { tool_outputs: [{ tool_call_id: callId, output: "INV-42 created" }] },
  });
  expect(answered.json().run.status).toBe("completed");
  const evalCase = (
    await f.loopd.app.inject({ method: "GET", url: `/conversations/${conv.id}/runs/${paused.run.id}/eval-case` })
  ).json() as EvalCase;
  expect(evalCase.conversation.client_tools).toEqual([invoice]);
  expect(evalCase.recorded).toEqual([
    { name: "create_invoice", input: { amount: 42 }, content: "INV-42 created", is_error: false },
  ]);
  f.llm.reset();

  f.llm.script(...turns);
  const { results } = await evals([evalCase]);
  expect(results[0]).toMatchObject({ pass: true, status: "completed", tool_calls: ["create_invoice"] });
  expect(toolResultsOf(f.llm.requests[1]!)).toEqual([{ content: "INV-42 created", is_error: false }]);
});

test("a case from a run with images holds them as a client sends them, and runs elsewhere with the same bytes sent to the model", async () => {
  const first = png(24, 24, 3);
  const second = png(16, 32, 4);
  const conv = await api(f.loopd.app).createConversation({ provider: "anthropic", tools: [] });
  f.llm.script({ text: "A square." }, { text: "A tall one." });
  const send = (text: string, image: Buffer) =>
    f.loopd.app.inject({
      method: "POST",
      url: `/conversations/${conv.id}/messages`,
      payload: {
        content: [
          { type: "text", text },
          { type: "image", source: { type: "base64", media_type: "image/png", data: b64(image) } },
        ],
      },
    });
  await send("What is this?", first);
  const run = (await send("And this?", second)).json().run;
  const evalCase = (
    await f.loopd.app.inject({ method: "GET", url: `/conversations/${conv.id}/runs/${run.id}/eval-case` })
  ).json();
  expect(JSON.stringify(evalCase)).not.toContain("attachment_id");
  expect(evalCase.history[0].content[1]).toEqual({
    type: "image",
    source: { type: "base64", media_type: "image/png", data: b64(first) },
  });
  expect(evalCase.input[1]).toEqual({
    type: "image",
    source: { type: "base64", media_type: "image/png", data: b64(second) },
  });

  f.llm.requests.length = 0;
  f.llm.script({ text: "A tall one." });
  const { results } = await evals([evalCase]);
  expect(results[0]).toMatchObject({ pass: true, status: "completed" });
  const sent = f.llm.requests[0]!.body.messages.flatMap((m: any) => m.content).filter((b: any) => b.type === "image");
  expect(sent.map((b: any) => b.source.data)).toEqual([b64(first), b64(second)]);
});
