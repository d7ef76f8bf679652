/**
 * `/v1/responses` through the official `openai` client: every response and
 * every streamed event validated against the Open Responses specification,
 * on both providers behind loopd.
 */
import OpenAI, { BadRequestError, NotFoundError } from "openai";
import { describe, expect, test } from "vitest";
import { useLoopd } from "../support/helpers/use-loopd.js";
import { expectSchema, expectStreamingEvent } from "../support/open-responses/validate-open-responses.js";

const f = useLoopd({ listen: true, env: { API_KEYS_REQUIRED: "true", MOCK_PROVIDER: "true" } });

const keys: Record<string, string> = {};
const keyOf = async (tenant: string) =>
  (keys[tenant] ??= (await f.loopd.services.store.keys.create({ tenant, name: null })).key);
const clientOf = async (tenant = "acme") =>
  new OpenAI({ apiKey: await keyOf(tenant), baseURL: `${f.loopd.url}/v1`, maxRetries: 0 });

/** A response, checked against the specification's `ResponseResource`. */
const valid = <T>(response: T): T => {
  expectSchema("ResponseResource", response);
  return response;
};

describe.each(["anthropic", "openai"] as const)("/v1/responses through %s", (provider) => {
  const model = () => `${provider}/${f.loopd.services.providers[provider].defaultModel}`;

  test("a plain question: completed, its answer as output_text", async () => {
    const client = await clientOf();
    f.llm.script({ text: "Hello there." });
    const response = valid(await client.responses.create({ model: model(), input: "Say hello." }));
    expect(response).toMatchObject({ object: "response", status: "completed", model: model(), error: null });
    expect(response.id).toMatch(/^resp_/);
    expect(response.output_text).toBe("Hello there.");
    expect(response.usage!.output_tokens).toBeGreaterThan(0);
    expect(valid(await client.responses.retrieve(response.id))).toEqual(response);
  });

  test("instructions reach the model for that response only", async () => {
    const client = await clientOf();
    f.llm.script({ text: "Ahoy." }, { text: "Hello." });
    const first = valid(
      await client.responses.create({ model: model(), input: "Hi", instructions: "Talk like a pirate." }),
    );
    expect(first.instructions).toBe("Talk like a pirate.");
    await client.responses.create({ model: model(), input: "Again", previous_response_id: first.id });
    const [sent, next] = f.llm.requests.map((r) => JSON.stringify(r.body));
    expect(sent).toContain("Talk like a pirate.");
    expect(next).not.toContain("Talk like a pirate.");
  });

  test("previous_response_id continues the conversation: the model sees the earlier turn", async () => {
    const client = await clientOf();
    f.llm.script({ text: "Noted: your name is Ada." }, { text: "Your name is Ada." });
    const first = await client.responses.create({ model: model(), input: "My name is Ada." });
    const second = valid(
      await client.responses.create({ model: model(), input: "What is my name?", previous_response_id: first.id }),
    );
    expect(second.previous_response_id).toBe(first.id);
    expect(JSON.stringify(f.llm.requests[1]!.body)).toContain("Noted: your name is Ada.");
  });

  test("streaming: the spec's events, each valid and numbered in order, ending response.completed", async () => {
    const client = await clientOf();
    f.llm.script({ text: "One two three." });
    const events = [];
    for await (const event of await client.responses.create({ model: model(), input: "Count.", stream: true })) {
      expectStreamingEvent(event);
      events.push(event);
    }
    expect(events.map((e) => e.sequence_number)).toEqual(events.map((_, i) => i));
    expect(events[0]!.type).toBe("response.created");
    expect(events[1]!.type).toBe("response.in_progress");
    expect(events.map((e) => e.type)).toContain("response.output_text.delta");
    const last = events.at(-1)!;
    expect(last.type).toBe("response.completed");
    if (last.type !== "response.completed") return;
    expect(last.response.output_text ?? last.response.output).toBeTruthy();
    const deltas = events.flatMap((e) => (e.type === "response.output_text.delta" ? [e.delta] : [])).join("");
    expect(deltas).toBe("One two three.");
    expect(valid(await client.responses.retrieve(last.response.id)).output).toEqual(last.response.output);
  });

  test("a function tool: function_call last and completed; its output with previous_response_id answers it", async () => {
    const client = await clientOf();
    const tools = [
      {
        type: "function" as const,
        name: "get_weather",
        description: "The weather in a city",
        parameters: { type: "object", properties: { city: { type: "string" } }, required: ["city"] },
        strict: false,
      },
    ];
    f.llm.script({ toolCalls: [{ name: "get_weather", input: { city: "Paris" } }] }, { text: "It is sunny in Paris." });
    const first = valid(await client.responses.create({ model: model(), input: "Weather in Paris?", tools }));
    expect(first.status).toBe("completed");
    const call = first.output.at(-1)!;
    expect(call).toMatchObject({ type: "function_call", name: "get_weather", arguments: '{"city":"Paris"}' });
    if (call.type !== "function_call") return;
    const second = valid(
      await client.responses.create({
        model: model(),
        tools,
        previous_response_id: first.id,
        input: [{ type: "function_call_output", call_id: call.call_id, output: "sunny" }],
      }),
    );
    expect(second.output_text).toBe("It is sunny in Paris.");
    // The earlier response stays as it was.
    expect((await client.responses.retrieve(first.id)).output.at(-1)).toEqual(call);
    const items = await client.responses.inputItems.list(second.id);
    expect(items.data).toEqual([
      expect.objectContaining({ type: "function_call_output", call_id: call.call_id, output: "sunny" }),
    ]);
  });
});

describe("errors in OpenAI's shape", () => {
  test("an unknown agent: 404 model_not_found naming model", async () => {
    const client = await clientOf();
    const err = await client.responses.create({ model: "agent:nobody", input: "hi" }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(NotFoundError);
    expect((err as NotFoundError).error).toMatchObject({
      type: "invalid_request_error",
      code: "model_not_found",
      param: "model",
    });
  });

  test("an unknown previous_response_id: 400 previous_response_not_found", async () => {
    const client = await clientOf();
    const err = await client.responses
      .create({ model: "mock/mock-1", input: "hi", previous_response_id: "resp_nope" })
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(BadRequestError);
    expect((err as BadRequestError).error).toMatchObject({
      code: "previous_response_not_found",
      param: "previous_response_id",
    });
  });

  test("a bad field: 400 invalid_request_error with its param; an unknown route under /v1: 404", async () => {
    const res = await fetch(`${f.loopd.url}/v1/responses`, {
      method: "POST",
      headers: { authorization: `Bearer ${await keyOf("acme")}`, "content-type": "application/json" },
      body: JSON.stringify({ model: "mock/mock-1", input: "hi", temperature: 9 }),
    });
    expect(res.status).toBe(400);
    expect(await res.json()).toEqual({
      error: { message: expect.any(String), type: "invalid_request_error", param: "temperature", code: null },
    });
    const nowhere = await fetch(`${f.loopd.url}/v1/nowhere`, {
      headers: { authorization: `Bearer ${await keyOf("acme")}` },
    });
    expect(nowhere.status).toBe(404);
    expect(((await nowhere.json()) as { error: unknown }).error).toMatchObject({
      type: "invalid_request_error",
      param: null,
    });
  });

  test("a NUL in an id or a body's string: 400 naming it, never a failed query (500)", async () => {
    const auth = { authorization: `Bearer ${await keyOf("acme")}` };
    const read = await fetch(`${f.loopd.url}/v1/responses/resp_%00x`, { headers: auth });
    expect(read.status).toBe(400);
    expect(((await read.json()) as { error: unknown }).error).toMatchObject({
      type: "invalid_request_error",
      param: "id",
    });
    for (const body of [
      { model: "mock/mock-1", input: "hi", previous_response_id: "resp_\u0000" },
      { model: "mock/mock-1", input: "hi\u0000" },
      { model: "mock/mock-1", input: "hi", conversation: "conv_\u0000" },
    ]) {
      const res = await fetch(`${f.loopd.url}/v1/responses`, {
        method: "POST",
        headers: { ...auth, "content-type": "application/json" },
        body: JSON.stringify(body),
      });
      expect(res.status).toBe(400);
      expect(((await res.json()) as { error: unknown }).error).toMatchObject({ type: "invalid_request_error" });
    }
  });

  test("without a key: 401 in OpenAI's shape; another tenant's response is unknown", async () => {
    const res = await fetch(`${f.loopd.url}/v1/responses/resp_x`);
    expect(res.status).toBe(401);
    expect(((await res.json()) as { error: unknown }).error).toMatchObject({ type: "authentication_error" });
    f.llm.script({ text: "Mine." });
    const mine = await (await clientOf("acme")).responses.create({ model: "mock/mock-1", input: "hi" });
    const err = await (await clientOf("beta")).responses.retrieve(mine.id).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(NotFoundError);
  });
});
