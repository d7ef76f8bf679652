import { z } from "zod";
import { describe, expect, test } from "vitest";
import { createBuiltinTools } from "../../../src/tools/builtin/index.js";
import { defineTool } from "../../../src/tools/define-tool.js";
import { api } from "../../support/helpers/api.js";
import { expectError } from "../../support/helpers/expect-error.js";
import { useLoopd } from "../../support/helpers/use-loopd.js";

const f = useLoopd({
  tools: [
    ...createBuiltinTools(),
    defineTool({
      name: "fetch_page",
      description: "A long page of text.",
      input: z.object({ n: z.number() }),
      readOnly: true,
      execute: ({ n }) => `page ${n}: ${"lorem ipsum ".repeat(60)}`,
    }),
  ],
});

const client = () => api(f.loopd.app);
const trace = async (conversationId: string, runId: string, query = "") => {
  const res = await f.loopd.app.inject({
    method: "GET",
    url: `/conversations/${conversationId}/runs/${runId}/trace${query}`,
  });
  expect(res.statusCode).toBe(200);
  return res.json() as { run: any; spans: any[] };
};
/** The JSON a request body is on the wire: what the fake LLM parsed. */
const asJson = (value: unknown) => JSON.parse(JSON.stringify(value));

describe.each(["anthropic", "openai"] as const)("the trace of a run on %s", (provider) => {
  test("rebuilds every model request exactly as the provider received it, with a trimmed context and an earlier refused turn", async () => {
    const conv = await client().createConversation({
      provider,
      system: "You are terse.",
      context: { strategy: "trim", keep_tool_results: 1 },
    });
    // An earlier turn the provider refused: kept in the history, never sent again.
    f.llm.script({ text: "No.", stop: provider === "anthropic" ? "refusal" : "content_filter" });
    await client().send(conv.id, { content: "Something refused." });
    f.llm.reset();

    f.llm.script(
      { text: "Reading.", toolCalls: [{ name: "fetch_page", input: { n: 1 } }] },
      {
        toolCalls: [
          { name: "fetch_page", input: { n: 2 } },
          { name: "calculate", input: { expression: "6*7" } },
        ],
      },
      { toolCalls: [{ name: "fetch_page", input: { n: 3 } }] },
      { toolCalls: [{ name: "fetch_page", input: { n: 4 } }] },
      { text: "Done: 42." },
    );
    const body = (await client().send(conv.id, { content: "Read four pages.", tool_choice: "required" })).json();
    expect(body.run).toMatchObject({ status: "completed", steps: 5 });
    expect(f.llm.requests).toHaveLength(5);

    const { run, spans } = await trace(conv.id, body.run.id, "?expand=requests");
    expect(run).toMatchObject({ id: body.run.id, status: "completed" });
    const calls = spans.filter((s) => s.type === "model.call");
    expect(calls).toHaveLength(5);
    calls.forEach((call, i) => {
      expect(call.request_verified).toBe(true);
      expect(asJson(call.request.body)).toEqual(f.llm.requests[i]!.body);
    });
    // Old results went as stubs: the rebuild went through the context builder.
    expect(JSON.stringify(f.llm.requests[4]!.body)).toContain("cleared from the context");
    expect(calls[0]).toMatchObject({
      step: 1,
      provider: conv.provider,
      outcome: "ok",
      request: { history_length: 3, tool_choice: "required" },
      response: { stop_reason: "tool_use", message_seq: 4 },
    });
    expect(calls[1].request.tool_choice).toBe("auto");
    expect(spans[0]).toMatchObject({
      type: "model.setup",
      provider,
      system: "You are terse.",
      context: { strategy: "trim", keep_tool_results: 1 },
      cache_key: conv.id,
    });
    expect(calls.every((c) => c.request.setup === spans[0].hash)).toBe(true);
    expect(calls[0].response.content[0]).toEqual({ type: "text", text: "Reading." });
    expect(calls[0].response.request_id).toEqual(expect.any(String));
    expect(calls[4].response.content).toEqual([{ type: "text", text: "Done: 42." }]);
    expect(calls.every((c) => c.latency_ms >= 0 && typeof c.request.body_sha256 === "string")).toBe(true);

    const tools = spans.filter((s) => s.type === "tool.call");
    expect(tools.map((t) => t.name)).toEqual(["fetch_page", "fetch_page", "calculate", "fetch_page", "fetch_page"]);
    expect(tools[2]).toMatchObject({
      input: { expression: "6*7" },
      output: JSON.stringify({ expression: "6*7", result: 42 }),
      is_error: false,
      status: "ok",
      source: "executed",
    });
    expect(tools.every((t) => typeof t.duration_ms === "number")).toBe(true);
    // One setup (system and tools) for the whole run, then the spans in the order things happened.
    expect(spans.filter((s) => s.type === "model.setup")).toHaveLength(1);
    expect(spans.map((s) => s.type)).toEqual([
      "model.setup",
      "model.call",
      "tool.call",
      "model.call",
      "tool.call",
      "tool.call",
      "model.call",
      "tool.call",
      "model.call",
      "tool.call",
      "model.call",
      "run.end",
    ]);
    expect(spans.at(-1)).toMatchObject({
      status: "completed",
      stop_reason: "end_turn",
      steps: 5,
      completed_at: expect.any(String),
    });
    expect(spans.map((s) => s.seq)).toEqual(spans.map((_, i) => i + 1));

    // Compact by default: no request bodies, no history.
    const compact = await trace(conv.id, body.run.id);
    expect(compact.spans.find((s) => s.type === "model.call").request.body).toBeUndefined();
    expect(JSON.stringify(compact).length).toBeLessThan(JSON.stringify(spans).length);
  });
});

test("NDJSON: the run first, then one span a line", async () => {
  const conv = await client().createConversation({ provider: "openai" });
  f.llm.script({ toolCalls: [{ name: "calculate", input: { expression: "1+1" } }] }, { text: "2" });
  const run = (await client().send(conv.id, { content: "1+1?" })).json().run;
  const res = await f.loopd.app.inject({
    method: "GET",
    url: `/conversations/${conv.id}/runs/${run.id}/trace`,
    headers: { accept: "application/x-ndjson" },
  });
  expect(res.statusCode).toBe(200);
  expect(res.headers["content-type"]).toContain("application/x-ndjson");
  const lines = res.body
    .trimEnd()
    .split("\n")
    .map((l) => JSON.parse(l));
  expect(lines[0]).toMatchObject({ type: "run", run: { id: run.id } });
  expect(lines.slice(1).map((l) => l.type)).toEqual([
    "model.setup",
    "model.call",
    "tool.call",
    "model.call",
    "run.end",
  ]);
});

test("a failed model call, a grace notice and the budget's end are in the trace", async () => {
  const conv = await client().createConversation({ provider: "anthropic" });
  f.llm.script({ toolCalls: [{ name: "calculate", input: { expression: "1+1" } }] }, { text: "Out of steps." });
  const run = (await client().send(conv.id, { content: "Go", max_steps: 2 })).json().run;
  const { spans } = await trace(conv.id, run.id);
  expect(spans.map((s) => s.type)).toEqual([
    "model.setup",
    "model.call",
    "tool.call",
    "notice",
    "model.call",
    "run.end",
  ]);
  expect(spans[3].text).toMatch(/Stopping/);
  expect(spans.at(-1)).toMatchObject({ status: "incomplete", stop_reason: "max_steps", budget_exceeded: "steps" });

  f.llm.script({ status: 400, message: "bad request from the fake" });
  const failed = (await client().send(conv.id, { content: "Again" })).json().run;
  const failedSpans = (await trace(conv.id, failed.id, "?expand=requests")).spans;
  expect(failedSpans.map((s) => s.type)).toEqual(["model.setup", "model.call", "run.end"]);
  expect(failedSpans[1]).toMatchObject({
    outcome: "failed",
    provider: "anthropic",
    model: failedSpans[0].model,
    status: 400,
    error: expect.stringContaining("bad request from the fake"),
    request_verified: true,
  });
  expect(asJson(failedSpans[1].request.body)).toEqual(f.llm.requests.at(-1)!.body);
});

test("unknown conversation or run: 404 in the contract's shape; the route is in /openapi.json", async () => {
  const conv = await client().createConversation({ provider: "mock" });
  await expectError(
    await f.loopd.app.inject({ method: "GET", url: `/conversations/${conv.id}/runs/run_nope/trace` }),
    404,
    "not_found",
  );
  await expectError(
    await f.loopd.app.inject({ method: "GET", url: `/conversations/conv_nope/runs/run_nope/trace` }),
    404,
    "not_found",
  );
  const openapi = (await f.loopd.app.inject({ method: "GET", url: "/openapi.json" })).json();
  expect(openapi.paths["/conversations/{id}/runs/{run_id}/trace"].get).toBeDefined();
});

test("a pause, its answer (approved, declined, a client's output) and a cancel while waiting are in the trace; the calls after them rebuild exactly", async () => {
  const invoice = {
    name: "create_invoice",
    description: "Bills a customer (the client does).",
    input_schema: { type: "object", properties: { customer: { type: "string" } } },
  };
  const conv = await client().createConversation({
    provider: "anthropic",
    approval_required: ["calculate", "get_current_time"],
    client_tools: [invoice],
  });
  f.llm.script({
    toolCalls: [
      { name: "calculate", input: { expression: "6*7" } },
      { name: "get_current_time", input: { timezone: "UTC" } },
      { name: "create_invoice", input: { customer: "ACME" } },
    ],
  });
  const paused = (await client().send(conv.id, { content: "Compute, tell the time, bill ACME" })).json().run;
  expect(paused.status).toBe("requires_action");
  const [calc, time, inv] = paused.required_action.tool_calls;
  f.llm.script({ text: "42; ACME billed; no time." });
  const answered = await f.loopd.app.inject({
    method: "POST",
    url: `/conversations/${conv.id}/runs/${paused.id}/actions`,
    payload: {
      approvals: [
        { tool_call_id: calc.tool_call_id, approve: true },
        { tool_call_id: time.tool_call_id, approve: false, reason: "not needed" },
      ],
      tool_outputs: [{ tool_call_id: inv.tool_call_id, output: "INV-42" }],
      actor: "ops@example.com",
    },
  });
  expect(answered.json().run.status).toBe("completed");

  const { spans } = await trace(conv.id, paused.id, "?expand=requests");
  expect(spans.map((s) => s.type)).toEqual([
    "model.setup",
    "model.call",
    "run.paused",
    "action.answered",
    "tool.call",
    "tool.call",
    "tool.call",
    "model.call",
    "run.end",
  ]);
  expect(spans[2].pending.map((p: any) => p.name)).toEqual(["calculate", "get_current_time", "create_invoice"]);
  expect(spans[3]).toMatchObject({
    actor: "ops@example.com",
    approvals: [{ approve: true }, { approve: false, reason: "not needed" }],
  });
  expect(spans.slice(4, 7).map((s) => [s.name, s.source])).toEqual([
    ["get_current_time", "declined"],
    ["create_invoice", "client"],
    ["calculate", "executed"],
  ]);
  expect(spans[5].output).toBe("INV-42");
  const calls = spans.filter((s) => s.type === "model.call");
  expect(calls.every((c) => c.request_verified)).toBe(true);
  expect(calls.map((c) => asJson(c.request.body))).toEqual(f.llm.requests.map((r) => r.body));

  // Cancelled while waiting: the pending call is answered by loopd, and the run's end is in the trace.
  f.llm.script({ toolCalls: [{ name: "calculate", input: { expression: "1+1" } }] });
  const waiting = (await client().send(conv.id, { content: "Again" })).json().run;
  await f.loopd.app.inject({ method: "POST", url: `/conversations/${conv.id}/runs/${waiting.id}/cancel` });
  const cancelled = (await trace(conv.id, waiting.id)).spans;
  expect(cancelled.slice(-2)).toMatchObject([
    { type: "tool.call", name: "calculate", source: "loopd", is_error: true },
    { type: "run.end", status: "cancelled", stop_reason: "cancelled", completed_at: expect.any(String) },
  ]);
});

test("a step writes no span row: the answer's and each result's spans are on their messages, run_spans keeps what tells no message", async () => {
  const conv = await client().createConversation({ provider: "openai" });
  f.llm.script(
    { toolCalls: [{ name: "calculate", input: { expression: "1+1" } }] },
    { toolCalls: [{ name: "calculate", input: { expression: "2+2" } }] },
    { text: "4" },
  );
  const run = (await client().send(conv.id, { content: "Add." })).json().run;
  const q = (text: string) => f.database.query({ name: "", text, values: [run.id] });
  expect((await q("select type from run_spans where run_id = $1 order by seq")).map((r: any) => r.type)).toEqual([
    "model.setup",
    "run.end",
  ]);
  const messages = await q("select role, span from messages where run_id = $1 order by seq");
  expect(messages.map((m: any) => [m.role, m.span !== null])).toEqual([
    ["user", false],
    ["assistant", true],
    ["tool", true],
    ["assistant", true],
    ["tool", true],
    ["assistant", true],
  ]);
  // What the row holds is not stored again.
  const stored = JSON.stringify(messages.map((m: any) => (typeof m.span === "string" ? JSON.parse(m.span) : m.span)));
  for (const field of ["message_seq", "result_seq", "history_length", "tool_call_id", "is_error"])
    expect(stored).not.toContain(field);
  const { spans } = await trace(conv.id, run.id);
  expect(spans.map((s) => [s.seq, s.type])).toEqual([
    [1, "model.setup"],
    [2, "model.call"],
    [3, "tool.call"],
    [4, "model.call"],
    [5, "tool.call"],
    [6, "model.call"],
    [7, "run.end"],
  ]);
  expect(spans[2]).toMatchObject({
    tool_call_id: expect.any(String),
    name: "calculate",
    is_error: false,
    result_seq: 3,
    input: { expression: "1+1" },
    output: expect.stringContaining("2"),
  });
  expect(spans[3]).toMatchObject({ request: { history_length: 3 }, response: { message_seq: 4 } });
});
