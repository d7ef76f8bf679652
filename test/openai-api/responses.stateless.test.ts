/**
 * `/v1/responses` with the history in `input`, as clients that keep their
 * own (or send `store: false`) send it: assistant messages, function calls
 * and their outputs become the conversation's history; both providers
 * behind loopd, the official `openai` client, every response validated
 * against the spec. The histories refused: responses.stateless.errors.test.ts.
 */
import OpenAI from "openai";
import type { ResponseInputItem } from "openai/resources/responses/responses";
import { describe, expect, test } from "vitest";
import { useLoopd } from "../support/helpers/use-loopd.js";
import { call, output, sentHistory, tools, user } from "../support/helpers/response-items.js";
import { expectSchema, expectStreamingEvent } from "../support/open-responses/validate-open-responses.js";

const f = useLoopd({ listen: true, env: { API_KEYS_REQUIRED: "true", MOCK_PROVIDER: "true" } });

let key: string | null = null;
const keyOf = async () => (key ??= (await f.loopd.services.store.keys.create({ tenant: "acme", name: null })).key);
const clientOf = async () => new OpenAI({ apiKey: await keyOf(), baseURL: `${f.loopd.url}/v1`, maxRetries: 0 });
const valid = <T>(response: T): T => {
  expectSchema("ResponseResource", response);
  return response;
};

describe.each(["anthropic", "openai"] as const)("a history in input, through %s", (provider) => {
  const model = () => `${provider}/${f.loopd.services.providers[provider].defaultModel}`;

  // Refused with 400 ("assistant messages are not taken") before: fails on the old code.
  test("the compliance suite's multi-turn: a conversation as message items, the model sees every turn", async () => {
    const client = await clientOf();
    f.llm.script({ text: "Your name is Alice." });
    const response = valid(
      await client.responses.create({
        model: model(),
        input: [
          user("My name is Alice."),
          { type: "message", role: "assistant", content: "Hello Alice! How can I help?" },
          user("What is my name?"),
        ],
      }),
    );
    expect(response).toMatchObject({ status: "completed", output_text: "Your name is Alice." });
    expect(sentHistory(f.llm.requests[0]!)).toEqual([
      "user:My name is Alice.",
      "assistant:Hello Alice! How can I help?",
      "user:What is my name?",
    ]);
    // The response's own input is the message it answered; the history before it is the conversation's.
    const items = await client.responses.inputItems.list(response.id);
    expect(items.data).toEqual([
      expect.objectContaining({ role: "user", content: [expect.objectContaining({ text: "What is my name?" })] }),
    ]);
  });

  test("store: false, the client's own tool loop: its output and the function's output sent back are answered", async () => {
    const client = await clientOf();
    f.llm.script({ toolCalls: [{ name: "get_weather", input: { city: "Paris" } }] }, { text: "It is sunny in Paris." });
    const input: ResponseInputItem[] = [{ role: "user", content: "Weather in Paris?" }];
    const first = valid(await client.responses.create({ model: model(), input, tools, store: false }));
    const fc = first.output.at(-1)!;
    expect(fc.type).toBe("function_call");
    if (fc.type !== "function_call") return;
    input.push(...(first.output as ResponseInputItem[]), output(fc.call_id));
    const second = valid(await client.responses.create({ model: model(), input, tools, store: false }));
    expect(second.output_text).toBe("It is sunny in Paris.");
    expect(second.output.map((item) => item.type)).toEqual(["message"]);
    expect(sentHistory(f.llm.requests[1]!)).toEqual([
      "user:Weather in Paris?",
      `call:${fc.call_id}`,
      `result:${fc.call_id}`,
    ]);
    expect(f.llm.requests[1]!.body.messages.at(-1)).toMatchObject(
      provider === "anthropic"
        ? { role: "user", content: [{ type: "tool_result", tool_use_id: fc.call_id, content: "sunny" }] }
        : { role: "tool", tool_call_id: fc.call_id, content: "sunny" },
    );
  });

  test("streamed, a history that ends with a function's output: the spec's events, the answer alone as output", async () => {
    const client = await clientOf();
    f.llm.script({ text: "Sunny." });
    const events = [];
    const stream = await client.responses.create({
      model: model(),
      tools,
      stream: true,
      input: [user("Weather?"), call("call_s1"), output("call_s1")],
    });
    for await (const event of stream) {
      expectStreamingEvent(event);
      events.push(event);
    }
    expect(events.map((e) => e.sequence_number)).toEqual(events.map((_, i) => i));
    const last = events.at(-1)!;
    expect(last.type).toBe("response.completed");
    if (last.type !== "response.completed") return;
    expect(last.response.output).toEqual([
      expect.objectContaining({ type: "message", content: [expect.objectContaining({ text: "Sunny." })] }),
    ]);
    expect(sentHistory(f.llm.requests[0]!)).toEqual(["user:Weather?", "call:call_s1", "result:call_s1"]);
    // Read back, it is the same; its input is the output it answered.
    expect(valid(await client.responses.retrieve(last.response.id)).output).toEqual(last.response.output);
    const items = await client.responses.inputItems.list(last.response.id);
    expect(items.data).toEqual([expect.objectContaining({ type: "function_call_output", call_id: "call_s1" })]);
  });

  test("an agent's output sent back whole: its server tool's mcp_call is the call and its result again", async () => {
    const client = await clientOf();
    const name = `stateless-${provider}`;
    const created = await fetch(`${f.loopd.url}/agents`, {
      method: "POST",
      headers: { authorization: `Bearer ${await keyOf()}`, "content-type": "application/json" },
      body: JSON.stringify({ name, provider, system: "You count.", tools: ["calculate"] }),
    });
    expect(created.status).toBe(201);
    f.llm.script(
      { toolCalls: [{ name: "calculate", input: { expression: "6*7" } }] },
      { text: "42." },
      { text: "84." },
    );
    const input: ResponseInputItem[] = [{ role: "user", content: "6*7?" }];
    const first = await client.responses.create({ model: `agent:${name}`, input, store: false });
    const mcp = first.output[0]!;
    expect(mcp.type).toBe("mcp_call");
    if (mcp.type !== "mcp_call") return;
    input.push(...(first.output as ResponseInputItem[]), { role: "user", content: "Twice that?" });
    const second = valid(await client.responses.create({ model: `agent:${name}`, input, store: false }));
    expect(second.output_text).toBe("84.");
    const callId = mcp.id.replace(/^mcp_/, "");
    expect(sentHistory(f.llm.requests[2]!)).toEqual([
      "user:6*7?",
      `call:${callId}`,
      `result:${callId}`,
      "assistant:42.",
      "user:Twice that?",
    ]);
    expect(JSON.stringify(f.llm.requests[2]!.body)).toContain(JSON.stringify(mcp.output).slice(1, -1));
  });

  test("with previous_response_id, the items follow the stored history; reasoning items are left out", async () => {
    const client = await clientOf();
    f.llm.script({ text: "Noted: Ada." }, { text: "Sunny, Ada." });
    const first = await client.responses.create({ model: model(), input: "My name is Ada." });
    const second = valid(
      await client.responses.create({
        model: model(),
        tools,
        previous_response_id: first.id,
        input: [
          user("Weather?"),
          { type: "reasoning", id: "rs_1", summary: [] },
          call("call_prev1"),
          output("call_prev1"),
          user("So?"),
        ],
      }),
    );
    expect(second.output_text).toBe("Sunny, Ada.");
    expect(sentHistory(f.llm.requests[1]!)).toEqual([
      "user:My name is Ada.",
      "assistant:Noted: Ada.",
      "user:Weather?",
      "call:call_prev1",
      "result:call_prev1",
      "user:So?",
    ]);
  });
});

test("a function's output sent back is clipped as a paused run's answer is (TOOL_RESULT_MAX_CHARS)", async () => {
  const client = await clientOf();
  f.llm.script({ text: "Long." });
  await client.responses.create({
    model: "openai/gpt-4o-mini",
    tools,
    store: false,
    input: [user("Weather?"), call("call_long"), output("call_long", "x".repeat(40_000))],
  });
  const sent = (f.llm.requests[0]!.body.messages as { role: string; content: string }[]).at(-1)!;
  expect(sent.role).toBe("tool");
  expect(sent.content.length).toBeLessThanOrEqual(16_384);
  expect(sent.content.length).toBeGreaterThan(1_000);
});
