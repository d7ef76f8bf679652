import { describe, expect, test } from "vitest";
import { evalCaseSchema } from "../../src/evals/eval-case.js";
import { api } from "../support/helpers/api.js";
import { startLoopd } from "../support/helpers/start-loopd.js";
import { useLoopd } from "../support/helpers/use-loopd.js";

const f = useLoopd();
const client = () => api(f.loopd.app);
const evalCase = (conv: string, run: string) =>
  f.loopd.app.inject({ method: "GET", url: `/conversations/${conv}/runs/${run}/eval-case` });

describe.each(["anthropic", "openai"] as const)("GET …/runs/:run_id/eval-case of a run on %s", (provider) => {
  test("a two-tool run after an earlier one: its settings, the history before it, its input, its tool results, and what it did as expectations", async () => {
    const conv = await client().createConversation({
      provider,
      system: "Be brief.",
      title: "Sums",
      tools: ["calculate", "get_current_time"],
    });
    f.llm.script({ text: "Hello." });
    await client().send(conv.id, { content: "Hi" });
    f.llm.script(
      { toolCalls: [{ name: "get_current_time", input: { timezone: "Asia/Tokyo" } }] },
      {
        toolCalls: [
          { name: "calculate", input: { expression: "6*7" } },
          { name: "calculate", input: { expression: "1/0" } },
        ],
      },
      { text: "It is late in Tokyo; 6*7 is 42." },
    );
    const sent = (await client().send(conv.id, { content: "Time in Tokyo and 6*7?" })).json();
    expect(sent.run).toMatchObject({ status: "completed", steps: 3 });

    const res = await evalCase(conv.id, sent.run.id);
    expect(res.statusCode).toBe(200);
    const body = res.json();
    // What the route writes is what `npm run eval` reads.
    expect(evalCaseSchema.parse(body)).toEqual(body);
    expect(body).toMatchObject({
      name: `Sums — ${sent.run.id}`,
      conversation: {
        system: "Be brief.",
        provider,
        model: sent.run.model,
        tools: ["calculate", "get_current_time"],
        context: { strategy: "trim", keep_tool_results: 4 },
        client_tools: [],
      },
      input: [{ type: "text", text: "Time in Tokyo and 6*7?" }],
      expect: {
        tool_calls: ["get_current_time", "calculate", "calculate"],
        final_text: { contains: "It is late in Tokyo; 6*7 is 42." },
        max_steps: 3,
      },
    });
    expect(body.history.map((m: { role: string; content: unknown }) => [m.role, m.content])).toEqual([
      ["user", [{ type: "text", text: "Hi" }]],
      ["assistant", [{ type: "text", text: "Hello." }]],
    ]);
    const results = sent.messages
      .filter((m: { role: string }) => m.role === "tool")
      .map((m: { content: { content: string }[] }) => m.content[0]!.content);
    expect(body.recorded).toEqual([
      { name: "get_current_time", input: { timezone: "Asia/Tokyo" }, content: results[0], is_error: false },
      {
        name: "calculate",
        input: { expression: "6*7" },
        content: JSON.stringify({ expression: "6*7", result: 42 }),
        is_error: false,
      },
      { name: "calculate", input: { expression: "1/0" }, content: results[2], is_error: true },
    ]);
    // Its cost with a quarter more as headroom.
    expect(body.expect.max_cost_usd).toBe(Math.ceil(sent.run.usage.cost_usd * 1.25 * 1e6) / 1e6);
    expect(body.expect).not.toHaveProperty("finish_result");
  });
});

test("a run that ended with finish: its result schema is the expectation, and no final text is expected when there was none", async () => {
  const schema = { type: "object", properties: { answer: { type: "number" } }, required: ["answer"] };
  const conv = await client().createConversation({ provider: "openai", finish: { result_schema: schema } });
  f.llm.script({ toolCalls: [{ name: "finish", input: { summary: "done", result: { answer: 42 } } }] });
  const sent = (await client().send(conv.id, { content: "6*7?" })).json();
  expect(sent.run).toMatchObject({ status: "completed", result: { result: { answer: 42 } } });
  const body = (await evalCase(conv.id, sent.run.id)).json();
  expect(body.expect).toEqual({
    tool_calls: ["finish"],
    finish_result: schema,
    max_steps: 1,
    max_cost_usd: Math.ceil(sent.run.usage.cost_usd * 1.25 * 1e6) / 1e6,
  });
  expect(body.history).toEqual([]);
});

test("an unknown run, or a run of another conversation, is the contract's 404", async () => {
  const conv = await client().createConversation({ provider: "openai" });
  const other = await client().createConversation({ provider: "openai" });
  f.llm.script({ text: "Hi." });
  const run = (await client().send(conv.id, { content: "Hello" })).json().run.id;
  const unknown = await evalCase(conv.id, "run_nope");
  expect(unknown.statusCode).toBe(404);
  expect(unknown.json()).toEqual({ error: { code: "not_found", message: "run run_nope does not exist", details: {} } });
  const elsewhere = await evalCase(other.id, run);
  expect(elsewhere.statusCode).toBe(404);
  expect(elsewhere.json()).toEqual({ error: { code: "not_found", message: `run ${run} does not exist`, details: {} } });
});

test("the route is in the OpenAPI document, its answer described by the case's schema", async () => {
  const doc = (await f.loopd.app.inject({ method: "GET", url: "/openapi.json" })).json();
  const operation = doc.paths["/conversations/{id}/runs/{run_id}/eval-case"].get;
  expect(operation.operationId).toBe("getRunEvalCase");
  const schema = operation.responses["200"].content["application/json"].schema;
  expect(JSON.stringify(schema)).toContain("recorded");
  expect(operation.responses["404"]).toBeDefined();
});

test("a run without a trace (TRACE=off) or not started yet cannot make a case: 400 saying why", async () => {
  const untraced = await startLoopd({ database: f.database, llm: f.llm, env: { TRACE: "off" } });
  try {
    const conv = await api(untraced.app).createConversation({ provider: "openai" });
    f.llm.script({ text: "Hi." });
    const run = (await api(untraced.app).send(conv.id, { content: "Hello" })).json().run.id;
    const res = await evalCase(conv.id, run);
    expect(res.statusCode).toBe(400);
    expect(res.json()).toEqual({
      error: {
        code: "invalid_request",
        message: `run ${run} has no trace (it ran with TRACE=off): an eval case is made of a run's trace`,
        details: { run_id: run },
      },
    });
  } finally {
    await untraced.close();
  }

  const conv = await client().createConversation({ provider: "openai" });
  f.llm.script({ text: "Hi.", chunkDelayMs: 200 }, { text: "Again." });
  const first = (await client().send(conv.id, { content: "Hello", wait: false })).json().run.id;
  const queued = (await client().send(conv.id, { content: "Hello again", on_busy: "enqueue", wait: false })).json().run;
  expect(queued.status).toBe("queued");
  const res = await evalCase(conv.id, queued.id);
  expect(res.statusCode).toBe(400);
  expect(res.json().error.message).toBe(`run ${queued.id} has not started: it has no message to make a case of`);
  await f.loopd.app.inject({ method: "POST", url: `/conversations/${conv.id}/runs/${first}/cancel` });
  // The queued run then starts and ends on its own turn, before the next test scripts the model.
  await expect
    .poll(
      async () =>
        (await f.loopd.app.inject({ method: "GET", url: `/conversations/${conv.id}/runs/${queued.id}` })).json().status,
    )
    .toBe("completed");
});

test("a configured secret the trace hides is hidden in the case too: in the history before the run and in its input (review)", async () => {
  const secret = "sk-server-SECRET-0123456789abcdef";
  const keyed = await startLoopd({ database: f.database, llm: f.llm, env: { SOME_SERVICE_API_KEY: secret } });
  try {
    const keyedClient = api(keyed.app);
    const conv = await keyedClient.createConversation({ provider: "openai" });
    f.llm.script({ text: `The service key is ${secret}.` });
    await keyedClient.send(conv.id, { content: "What is the key?" });
    f.llm.script({ text: "OK." });
    const second = (await keyedClient.send(conv.id, { content: `Is it ${secret}?` })).json().run.id;
    const trace = await keyed.app.inject({
      method: "GET",
      url: `/conversations/${conv.id}/runs/${second}/trace?expand=requests`,
    });
    expect(trace.body).not.toContain(secret);
    const res = await keyed.app.inject({ method: "GET", url: `/conversations/${conv.id}/runs/${second}/eval-case` });
    expect(res.statusCode).toBe(200);
    expect(res.body).not.toContain(secret);
    const body = res.json();
    expect(body.history[1].content).toEqual([{ type: "text", text: "The service key is [redacted]." }]);
    expect(body.input).toEqual([{ type: "text", text: "Is it [redacted]?" }]);
  } finally {
    await keyed.close();
  }
});
