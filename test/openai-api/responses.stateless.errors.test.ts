/**
 * `/v1/responses` refuses a history the model could not take, and files by
 * id or URL: a 400 in OpenAI's shape naming the item, nothing sent to the
 * model, nothing kept.
 */
import OpenAI from "openai";
import { describe, expect, test } from "vitest";
import { useLoopd } from "../support/helpers/use-loopd.js";
import { MAX_INPUT_ITEMS } from "../../src/openai-api/responses/create-response-body.js";
import { call, output, sentHistory, tools, user } from "../support/helpers/response-items.js";

const f = useLoopd({ listen: true, env: { API_KEYS_REQUIRED: "true", MOCK_PROVIDER: "true" } });

let key: string | null = null;
const keyOf = async () => (key ??= (await f.loopd.services.store.keys.create({ tenant: "acme", name: null })).key);
const clientOf = async () => new OpenAI({ apiKey: await keyOf(), baseURL: `${f.loopd.url}/v1`, maxRetries: 0 });
const post = async (body: object) =>
  fetch(`${f.loopd.url}/v1/responses`, {
    method: "POST",
    headers: { authorization: `Bearer ${await keyOf()}`, "content-type": "application/json" },
    body: JSON.stringify(body),
  });

describe("a history the model could not take: 400 naming the item, nothing sent or kept", () => {
  const cases: [string, object[], string, RegExp][] = [
    ["an output without its call", [user("Hi"), output("call_x")], "input[1].call_id", /no function_call call_x waits/],
    [
      "a call without its output before a user message",
      [user("Hi"), call("call_a"), user("And?")],
      "input[1]",
      /call_a has no function_call_output/,
    ],
    [
      "a call without its output before an assistant message",
      [user("Hi"), call("call_b"), { role: "assistant", content: "Done." }, user("And?")],
      "input[2]",
      /call_b has no output yet/,
    ],
    [
      "a call id used twice",
      [user("Hi"), call("call_c"), output("call_c"), call("call_c"), output("call_c")],
      "input[3].call_id",
      /call_c is the id of a call/,
    ],
    [
      "an output given twice",
      [user("Hi"), call("call_d"), output("call_d"), output("call_d")],
      "input[3].call_id",
      /no function_call call_d waits/,
    ],
    [
      "a history that ends with an assistant message",
      [user("Hi"), { role: "assistant", content: "Hello." }],
      "input[1]",
      /ends with an assistant message/,
    ],
    [
      "an approval with a history",
      [
        user("Hi"),
        { role: "assistant", content: "Hello." },
        { type: "mcp_approval_response", approval_request_id: "mcpr_x", approve: true },
      ],
      "input[2].type",
      /mcp_approval_response/,
    ],
    [
      "an mcp_call whose id is not one loopd showed",
      [user("Hi"), { type: "mcp_call", id: "x1", name: "calculate", arguments: "{}", output: "1" }, user("?")],
      "input[1].id",
      /not the id of an mcp_call/,
    ],
    [
      "an item reference",
      [user("Hi"), { role: "assistant", content: "Hello." }, { type: "item_reference", id: "msg_1" }, user("?")],
      "input[2].type",
      /item_reference/,
    ],
  ];
  test.each(cases)("%s", async (_, input, param, message) => {
    const before = await f.loopd.services.store.conversations.list("acme", { limit: 100 });
    const res = await post({ model: "openai/gpt-4o-mini", tools, input, store: false });
    expect(res.status).toBe(400);
    const { error } = (await res.json()) as { error: { message: string; param: string; type: string } };
    expect(error).toMatchObject({ type: "invalid_request_error", param });
    expect(error.message).toMatch(message);
    expect(f.llm.requests).toHaveLength(0);
    expect(await f.loopd.services.store.conversations.list("acme", { limit: 100 })).toEqual(before);
  });

  test("a call id the conversation already holds, with previous_response_id", async () => {
    f.llm.script({ toolCalls: [{ name: "get_weather", input: { city: "Paris" } }] }, { text: "Sunny." });
    const client = await clientOf();
    const first = await client.responses.create({ model: "openai/gpt-4o-mini", tools, input: "Weather?" });
    const fc = first.output.at(-1)!;
    if (fc.type !== "function_call") throw new Error("expected a function call");
    const second = await client.responses.create({
      model: "openai/gpt-4o-mini",
      tools,
      previous_response_id: first.id,
      input: [output(fc.call_id)],
    });
    const res = await post({
      model: "openai/gpt-4o-mini",
      tools,
      previous_response_id: second.id,
      input: [call(fc.call_id), output(fc.call_id), user("Again?")],
    });
    expect(res.status).toBe(400);
    expect(((await res.json()) as { error: unknown }).error).toMatchObject({ param: "input[0].call_id" });
    expect(f.llm.requests).toHaveLength(2);
  });
});

describe("a history that claims a server tool ran: history only, never run", () => {
  const agent = async () => {
    const created = await fetch(`${f.loopd.url}/agents`, {
      method: "POST",
      headers: { authorization: `Bearer ${await keyOf()}`, "content-type": "application/json" },
      body: JSON.stringify({
        name: "gated",
        provider: "openai",
        tools: ["calculate"],
        approval_required: ["calculate"],
      }),
    });
    expect([201, 409]).toContain(created.status);
    return "agent:gated";
  };
  const calc = { type: "function_call", call_id: "call_calc", name: "calculate", arguments: '{"expression":"6*7"}' };

  test("an approval-gated tool's call with no output: 400, nothing run, no approval asked", async () => {
    const res = await post({ model: await agent(), input: [user("6*7?"), calc], store: false });
    expect(res.status).toBe(400);
    expect(((await res.json()) as { error: unknown }).error).toMatchObject({ param: "input[1]" });
    expect(f.llm.requests).toHaveLength(0);
  });

  test.each([
    [
      "an mcp_call with its output",
      [{ type: "mcp_call", id: "mcp_call_calc", name: "calculate", arguments: "{}", output: "1337" }],
    ],
    ["a function_call with its output", [calc, output("call_calc", "1337")]],
  ])(
    "%s ending the input: the model answers the claimed result; the tool is neither run nor asked for",
    async (_, items) => {
      f.llm.script({ text: "1337 it is." });
      const res = await post({ model: await agent(), input: [user("6*7?"), ...items], store: false });
      expect(res.status).toBe(200);
      const body = (await res.json()) as { status: string; output: { type: string }[] };
      expect(body.status).toBe("completed");
      expect(body.output.map((o) => o.type)).toEqual(["message"]);
      expect(f.llm.requests).toHaveLength(1);
      expect(sentHistory(f.llm.requests[0]!)).toEqual(["user:6*7?", "call:call_calc", "result:call_calc"]);
      expect(JSON.stringify(f.llm.requests[0]!.body)).toContain("1337");
      expect(JSON.stringify(f.llm.requests[0]!.body)).not.toContain('"42"');
    },
  );
});

describe("a history of many items", () => {
  /** A history of `MAX_INPUT_ITEMS` items: a user's message, calls with their outputs, a user's message. */
  const longHistory = () => [
    user("Hi"),
    ...Array.from({ length: (MAX_INPUT_ITEMS - 2) / 2 }, (_, i) => [call(`call_${i}`), output(`call_${i}`)]).flat(),
    user("And now?"),
  ];

  test("MAX_INPUT_ITEMS items are taken (appended in one statement the database takes)", async () => {
    f.llm.script({ text: "Done." });
    const input = longHistory();
    expect(input).toHaveLength(MAX_INPUT_ITEMS);
    const res = await post({ model: "openai/gpt-4o-mini", tools, input, store: false });
    expect(res.status).toBe(200);
    expect(((await res.json()) as { status: string }).status).toBe("completed");
    expect(f.llm.requests).toHaveLength(1);
  });

  test("one more is a 400 naming input (twice as many failed the history's insert: a 500)", async () => {
    const before = await f.loopd.services.store.conversations.list("acme", { limit: 100 });
    const res = await post({ model: "openai/gpt-4o-mini", tools, input: [...longHistory(), user("?")], store: false });
    expect(res.status).toBe(400);
    const { error } = (await res.json()) as { error: { message: string; param: string } };
    expect(error).toMatchObject({ param: "input" });
    expect(error.message).toMatch(/at most 5000 items/);
    expect(f.llm.requests).toHaveLength(0);
    expect(await f.loopd.services.store.conversations.list("acme", { limit: 100 })).toEqual(before);
  });
});

describe("files by id or URL: loopd has no Files API and fetches no client's URL", () => {
  const part = (p: object) => [{ role: "user", content: [{ type: "input_text", text: "Read this." }, p] }];
  const cases: [string, object, string, RegExp][] = [
    ["an input_file by file_id", { type: "input_file", file_id: "file-abc" }, "file_id", /no Files API.*file_data/],
    ["an input_image by file_id", { type: "input_image", file_id: "file-abc" }, "file_id", /no Files API.*image_url/],
    [
      "an input_file by file_url",
      { type: "input_file", file_url: "https://example.com/a.pdf" },
      "file_url",
      /does not fetch files by URL.*file_data/,
    ],
  ];
  test.each(cases)("%s: 400 naming it, on /v1/responses and /v1/conversations", async (_, p, field, message) => {
    const res = await post({ model: "openai/gpt-4o-mini", input: part(p) });
    expect(res.status).toBe(400);
    const { error } = (await res.json()) as { error: { message: string; param: string } };
    expect(error).toMatchObject({ param: `input[0].content[1].${field}` });
    expect(error.message).toMatch(message);
    const conv = await fetch(`${f.loopd.url}/v1/conversations`, {
      method: "POST",
      headers: { authorization: `Bearer ${await keyOf()}`, "content-type": "application/json" },
      body: JSON.stringify({ items: part(p) }),
    });
    expect(conv.status).toBe(400);
    expect(((await conv.json()) as { error: unknown }).error).toMatchObject({
      param: `items[0].content[1].${field}`,
    });
    expect(f.llm.requests).toHaveLength(0);
  });
});
