/**
 * `/v1/responses` beyond a plain turn: images, forks of older responses, an
 * agent's server tools as `mcp_call`, approvals, a JSON Schema answer,
 * `store: false`, a named conversation; both providers behind loopd.
 */
import OpenAI, { BadRequestError, NotFoundError } from "openai";
import { describe, expect, test } from "vitest";
import { useLoopd } from "../support/helpers/use-loopd.js";
import { png } from "../support/helpers/test-images.js";
import { expectSchema, expectStreamingEvent } from "../support/open-responses/validate-open-responses.js";

const f = useLoopd({ listen: true, env: { API_KEYS_REQUIRED: "true", MOCK_PROVIDER: "true" } });

let key: string | null = null;
const keyOf = async () => (key ??= (await f.loopd.services.store.keys.create({ tenant: "acme", name: null })).key);
const clientOf = async () => new OpenAI({ apiKey: await keyOf(), baseURL: `${f.loopd.url}/v1`, maxRetries: 0 });
const post = async (path: string, body: object) =>
  fetch(`${f.loopd.url}${path}`, {
    method: "POST",
    headers: { authorization: `Bearer ${await keyOf()}`, "content-type": "application/json" },
    body: JSON.stringify(body),
  });
const valid = <T>(response: T): T => {
  expectSchema("ResponseResource", response);
  return response;
};
let agents = 0;

describe.each(["anthropic", "openai"] as const)("/v1/responses through %s", (provider) => {
  const model = () => `${provider}/${f.loopd.services.providers[provider].defaultModel}`;
  const agent = async (fields: object) => {
    const name = `support-${provider}-${++agents}`;
    const res = await post("/agents", { name, provider, system: "You are support.", ...fields });
    expect(res.status).toBe(201);
    return name;
  };

  test("an image as input_image (a data: URL) reaches the model as an image", async () => {
    const client = await clientOf();
    f.llm.script({ text: "A small square." });
    const url = `data:image/png;base64,${png(32, 32).toString("base64")}`;
    const response = valid(
      await client.responses.create({
        model: model(),
        input: [
          {
            role: "user",
            content: [
              { type: "input_text", text: "What is this?" },
              { type: "input_image", image_url: url, detail: "auto" },
            ],
          },
        ],
      }),
    );
    expect(response.output_text).toBe("A small square.");
    const sent = JSON.stringify(f.llm.requests[0]!.body);
    expect(sent).toContain(png(32, 32).toString("base64").slice(0, 40));
    const items = await client.responses.inputItems.list(response.id);
    expect(items.data[0]).toMatchObject({ type: "message", role: "user" });
  });

  test("an older previous_response_id forks there: the later turn is not in the fork's history, the original unchanged", async () => {
    const client = await clientOf();
    f.llm.script({ text: "First answer." }, { text: "Second answer." }, { text: "Branch answer." });
    const first = await client.responses.create({ model: model(), input: "Question one." });
    const second = await client.responses.create({
      model: model(),
      input: "Question two.",
      previous_response_id: first.id,
    });
    const branch = valid(
      await client.responses.create({ model: model(), input: "Another question two.", previous_response_id: first.id }),
    );
    expect(branch.output_text).toBe("Branch answer.");
    const sent = JSON.stringify(f.llm.requests[2]!.body);
    expect(sent).toContain("First answer.");
    expect(sent).not.toContain("Second answer.");
    expect((await client.responses.retrieve(second.id)).output_text).toBe("Second answer.");
    // The branch is its conversation's latest: it continues in place.
    f.llm.script({ text: "Go on." });
    await client.responses.create({ model: model(), input: "And?", previous_response_id: branch.id });
    expect(JSON.stringify(f.llm.requests[3]!.body)).toContain("Branch answer.");
  });

  test("an agent by name: its server tool comes back as mcp_call (server_label loopd), never function_call", async () => {
    const client = await clientOf();
    const name = await agent({ tools: ["calculate"] });
    f.llm.script({ toolCalls: [{ name: "calculate", input: { expression: "6*7" } }] }, { text: "It is 42." });
    const response = valid(await client.responses.create({ model: `agent:${name}`, input: "What is 6*7?" }));
    expect(response.output.map((i) => i.type)).toEqual(["mcp_call", "message"]);
    expect(response.output[0]).toMatchObject({
      server_label: "loopd",
      name: "calculate",
      output: expect.stringContaining("42"),
      error: null,
    });
    expect(response.output_text).toBe("It is 42.");
    expect(JSON.stringify(f.llm.requests[0]!.body)).toContain("You are support.");
    const unknown = await client.responses.create({ model: `agent:${name}@9`, input: "hi" }).catch((e: unknown) => e);
    expect(unknown).toBeInstanceOf(NotFoundError);
  });

  test("an approval: mcp_approval_request last, completed; mcp_approval_response answers it (approve, then deny)", async () => {
    const client = await clientOf();
    const name = await agent({ tools: ["calculate"], approval_required: ["calculate"] });
    f.llm.script({ toolCalls: [{ name: "calculate", input: { expression: "2+2" } }] }, { text: "It is 4." });
    const asked = valid(await client.responses.create({ model: `agent:${name}`, input: "2+2?" }));
    expect(asked.status).toBe("completed");
    const request = asked.output.at(-1)!;
    expect(request).toMatchObject({ type: "mcp_approval_request", name: "calculate", server_label: "loopd" });
    const approved = valid(
      await client.responses.create({
        model: `agent:${name}`,
        previous_response_id: asked.id,
        input: [{ type: "mcp_approval_response", approval_request_id: request.id!, approve: true }],
      }),
    );
    expect(approved.output.map((i) => i.type)).toEqual(["mcp_call", "message"]);
    expect(approved.output[0]).toMatchObject({ name: "calculate", output: expect.stringContaining("4") });

    f.llm.script({ toolCalls: [{ name: "calculate", input: { expression: "1/0" } }] }, { text: "Understood." });
    const again = await client.responses.create({
      model: `agent:${name}`,
      input: "1/0?",
      previous_response_id: approved.id,
    });
    const denied = valid(
      await client.responses.create({
        model: `agent:${name}`,
        previous_response_id: again.id,
        input: [
          {
            type: "mcp_approval_response",
            approval_request_id: again.output.at(-1)!.id!,
            approve: false,
            reason: "no",
          },
        ],
      }),
    );
    expect(denied.output_text).toBe("Understood.");
    const items = await client.responses.inputItems.list(denied.id);
    expect(items.data).toEqual([
      expect.objectContaining({ type: "mcp_approval_response", approve: false, reason: "no" }),
    ]);
  });

  test("an mcp_approval_request sent back: taken with its answer, refused in words otherwise", async () => {
    const client = await clientOf();
    const name = await agent({ tools: ["calculate"], approval_required: ["calculate"] });
    f.llm.script({ toolCalls: [{ name: "calculate", input: { expression: "3+3" } }] }, { text: "It is 6." });
    const asked = valid(await client.responses.create({ model: `agent:${name}`, input: "3+3?" }));
    const request = asked.output.at(-1)! as {
      type: "mcp_approval_request";
      id: string;
      name: string;
      arguments: string;
      server_label: string;
    };
    expect(request.type).toBe("mcp_approval_request");
    const refusal = (input: unknown[]) =>
      client.responses.create({ model: `agent:${name}`, previous_response_id: asked.id, input: input as never }).then(
        () => null,
        (err: { status: number; error: { param: string; message: string } }) => ({
          status: err.status,
          param: err.error.param,
          message: err.error.message,
        }),
      );
    // Alone, it asks nothing of the run: said so, and nothing changes.
    expect(await refusal([request])).toEqual({
      status: 400,
      param: "input[0].type",
      message: expect.stringContaining("answer it with an mcp_approval_response"),
    });
    // In a history the client keeps (an assistant message before it), even with its answer: it belongs to the paused response.
    const answer = { type: "mcp_approval_response", approval_request_id: request.id, approve: true };
    expect(await refusal([{ role: "assistant", content: "Let me check." }, request, answer])).toEqual({
      status: 400,
      param: "input[1].type",
      message: expect.stringContaining("not the rest of that response's output"),
    });
    // Echoed with its answer, as a client keeping the output sends it: the answer goes through.
    const approved = valid(
      await client.responses.create({
        model: `agent:${name}`,
        previous_response_id: asked.id,
        input: [request, { type: "mcp_approval_response", approval_request_id: request.id, approve: true }],
      }),
    );
    expect(approved.output.map((i) => i.type)).toEqual(["mcp_call", "message"]);
    expect(approved.output[0]).toMatchObject({ name: "calculate", output: expect.stringContaining("6") });
  });

  test("text.format json_schema: the answer is the JSON the schema asks for", async () => {
    const client = await clientOf();
    f.llm.script({ toolCalls: [{ name: "finish", input: { summary: "done", result: { city: "Paris", temp: 21 } } }] });
    const response = valid(
      await client.responses.create({
        model: model(),
        input: "Weather as JSON.",
        text: {
          format: {
            type: "json_schema",
            name: "weather",
            strict: true,
            schema: {
              type: "object",
              properties: { city: { type: "string" }, temp: { type: "number" } },
              required: ["city", "temp"],
            },
          },
        },
      }),
    );
    expect(JSON.parse(response.output_text)).toEqual({ city: "Paris", temp: 21 });
    expect(response.text?.format).toMatchObject({ type: "json_schema", name: "weather" });
  });

  test("store: false answers and keeps nothing; with background it is refused", async () => {
    const client = await clientOf();
    const conversations = async () =>
      (await f.loopd.services.store.conversations.list("acme", { limit: 1000 })).rows.length;
    const before = await conversations();
    f.llm.script({ text: "Not kept." });
    const response = valid(await client.responses.create({ model: model(), input: "Hi", store: false }));
    expect(response).toMatchObject({ store: false, output_text: "Not kept." });
    expect(await conversations()).toBe(before);
    expect(await client.responses.retrieve(response.id).catch((e: unknown) => e)).toBeInstanceOf(NotFoundError);
    const refused = await client.responses
      .create({ model: model(), input: "Hi", store: false, background: true })
      .catch((e: unknown) => e);
    expect(refused).toBeInstanceOf(BadRequestError);
    expect((refused as BadRequestError).error).toMatchObject({ param: "background" });
  });

  test("a function call streamed: its item, arguments delta and done, then response.completed", async () => {
    const client = await clientOf();
    f.llm.script({ toolCalls: [{ name: "lookup", input: { q: "x" } }] });
    const stream = client.responses.stream({
      model: model(),
      input: "Look it up.",
      tools: [{ type: "function", name: "lookup", description: null, parameters: null, strict: false }],
    });
    const types: string[] = [];
    for await (const event of stream) {
      expectStreamingEvent(event);
      types.push(event.type);
    }
    const final = valid(await stream.finalResponse());
    expect(types).toEqual(
      expect.arrayContaining([
        "response.output_item.added",
        "response.function_call_arguments.delta",
        "response.function_call_arguments.done",
        "response.output_item.done",
        "response.completed",
      ]),
    );
    expect(final.output.at(-1)).toMatchObject({ type: "function_call", name: "lookup", arguments: '{"q":"x"}' });
  });
});

test("conversation names a loopd conversation: the response goes on in it, echoed as {id}", async () => {
  const client = await clientOf();
  const conv = (await (await post("/conversations", { provider: "mock" })).json()) as { id: string };
  const response = valid(
    await client.responses.create({ model: "mock/mock-1", input: "Hello", conversation: conv.id }),
  );
  expect(response).toMatchObject({ conversation: { id: conv.id } });
  const both = await client.responses
    .create({ model: "mock/mock-1", input: "x", conversation: conv.id, previous_response_id: response.id })
    .catch((e: unknown) => e);
  expect(both).toBeInstanceOf(BadRequestError);
});

test("the mock provider, offered a function tool and asked a question, calls it", async () => {
  const client = await clientOf();
  const response = valid(
    await client.responses.create({
      model: "mock/mock-1",
      input: "What is the weather in Paris?",
      tools: [
        {
          type: "function",
          name: "get_weather",
          description: "The weather",
          parameters: { type: "object", properties: { city: { type: "string" } }, required: ["city"] },
          strict: false,
        },
      ],
    }),
  );
  expect(response.output.at(-1)).toMatchObject({ type: "function_call", name: "get_weather" });
});
