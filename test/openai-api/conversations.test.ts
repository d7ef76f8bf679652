/**
 * `/v1/conversations`: OpenAI's Conversations API over loopd's conversations,
 * driven by the official `openai` client against a listening loopd. The same
 * conversation is read through loopd's own API, and the history the items
 * make is sent to the fake LLM, which refuses one the real APIs would.
 */
import OpenAI, { BadRequestError, ConflictError, NotFoundError, type APIError } from "openai";
import { beforeAll, describe, expect, test } from "vitest";
import { useLoopd } from "../support/helpers/use-loopd.js";
import { png } from "../support/helpers/test-images.js";

const f = useLoopd({
  listen: true,
  env: { API_KEYS_REQUIRED: "true", ANTHROPIC_API_KEY: "test-anthropic-key", OPENAI_API_KEY: "test-openai-key" },
});
let keyA = "";
let keyB = "";
let a: OpenAI;
let b: OpenAI;

beforeAll(async () => {
  keyA = (await f.loopd.services.store.keys.create({ tenant: "acme", name: null })).key;
  keyB = (await f.loopd.services.store.keys.create({ tenant: "beta", name: null })).key;
  a = new OpenAI({ apiKey: keyA, baseURL: `${f.loopd.url}/v1`, maxRetries: 0 });
  b = new OpenAI({ apiKey: keyB, baseURL: `${f.loopd.url}/v1`, maxRetries: 0 });
});

/** loopd's own API, with tenant a's key. */
const loopd = async (method: "GET" | "POST" | "PATCH" | "DELETE", url: string, body?: object) => {
  const res = await fetch(`${f.loopd.url}${url}`, {
    method,
    headers: { authorization: `Bearer ${keyA}`, ...(body && { "content-type": "application/json" }) },
    ...(body && { body: JSON.stringify(body) }),
  });
  // Any: the tests read loopd's own answers by their documented fields.
  return { status: res.status, body: (res.status === 204 ? null : await res.json()) as any };
};

/** Every item of a conversation, oldest first, through the client's pages. */
async function allItems(id: string) {
  const items = [];
  for await (const item of a.conversations.items.list(id, { order: "asc", limit: 3 })) items.push(item);
  return items;
}

const user = (text: string) => ({ type: "message" as const, role: "user" as const, content: text });

/** The error the client throws, with OpenAI's fields. */
async function failure(promise: Promise<unknown>) {
  try {
    await promise;
  } catch (err) {
    return err as APIError;
  }
  throw new Error("expected the request to fail");
}

describe("conversations", () => {
  test("create with metadata and items, retrieve, update and delete; the same conversation on loopd's own API", async () => {
    const before = Math.floor(Date.now() / 1000);
    const created = await a.conversations.create({
      metadata: { topic: "billing" },
      items: [user("Hello"), { type: "message", role: "assistant", content: "Hi, how can I help?" }],
    });
    expect(created).toMatchObject({ object: "conversation", metadata: { topic: "billing" } });
    expect(created.id).toMatch(/^conv_/);
    expect(created.created_at).toBeGreaterThanOrEqual(before - 1);
    expect(created.created_at).toBeLessThanOrEqual(Math.floor(Date.now() / 1000));

    expect(await a.conversations.retrieve(created.id)).toEqual(created);
    const mine = await loopd("GET", `/conversations/${created.id}/messages`);
    expect(mine.body.data.map((m: { role: string; content: unknown }) => [m.role, m.content])).toEqual([
      ["user", [{ type: "text", text: "Hello" }]],
      ["assistant", [{ type: "text", text: "Hi, how can I help?" }]],
    ]);
    // A message's item is named by the message's own id, as loopd's API shows it.
    const items = await a.conversations.items.list(created.id, { order: "asc" });
    expect(items.data.map((item) => item.id)).toEqual(mine.body.data.map((m: { id: string }) => m.id));
    expect((await loopd("GET", `/conversations/${created.id}`)).body.metadata).toEqual({ topic: "billing" });

    const updated = await a.conversations.update(created.id, { metadata: { topic: "refund", stage: "2" } });
    expect(updated.metadata).toEqual({ topic: "refund", stage: "2" });
    expect((await a.conversations.update(created.id, { metadata: null })).metadata).toEqual({});

    const deleted = await a.conversations.delete(created.id);
    expect(deleted).toEqual({ id: created.id, object: "conversation.deleted", deleted: true });
    expect(await failure(a.conversations.retrieve(created.id))).toBeInstanceOf(NotFoundError);
    expect((await loopd("GET", `/conversations/${created.id}`)).status).toBe(404);
  });

  test("errors are OpenAI's body with the same statuses: NotFoundError for an unknown id, BadRequestError naming the param", async () => {
    const missing = await failure(a.conversations.retrieve("conv_doesnotexist"));
    expect(missing).toBeInstanceOf(NotFoundError);
    expect(missing.error).toMatchObject({ type: "invalid_request_error", param: null, code: "not_found" });
    expect(missing.message).toMatch(/conversation conv_doesnotexist does not exist/);

    const raw = await fetch(`${f.loopd.url}/v1/conversations`, {
      method: "POST",
      headers: { authorization: `Bearer ${keyA}`, "content-type": "application/json" },
      body: JSON.stringify({ metadata: { n: 1 } }),
    });
    expect(raw.status).toBe(400);
    const body = (await raw.json()) as { error: unknown };
    expect(Object.keys(body)).toEqual(["error"]);
    expect(body.error).toEqual({
      message: expect.any(String),
      type: "invalid_request_error",
      param: "metadata.n",
      code: null,
    });

    const unauthorized = await fetch(`${f.loopd.url}/v1/conversations/conv_x`, { headers: {} });
    expect(unauthorized.status).toBe(401);
    expect(((await unauthorized.json()) as { error: unknown }).error).toMatchObject({
      type: "authentication_error",
      code: "unauthorized",
    });
  });

  test("metadata within OpenAI's limits: 16 keys, keys of 64 characters, values of 512", async () => {
    const keys = (n: number) => Object.fromEntries(Array.from({ length: n }, (_, i) => [`k${i}`, "v"]));
    expect((await a.conversations.create({ metadata: keys(16) })).metadata).toEqual(keys(16));
    const tooMany = await failure(a.conversations.create({ metadata: keys(17) }));
    expect(tooMany).toBeInstanceOf(BadRequestError);
    expect(tooMany.param).toBe("metadata");
    const conv = await a.conversations.create({ metadata: { ["k".repeat(64)]: "v".repeat(512) } });
    const longKey = await failure(a.conversations.update(conv.id, { metadata: { ["k".repeat(65)]: "v" } }));
    expect(longKey).toBeInstanceOf(BadRequestError);
    const longValue = await failure(a.conversations.update(conv.id, { metadata: { k: "v".repeat(513) } }));
    expect(longValue).toBeInstanceOf(BadRequestError);
    expect(longValue.param).toBe("metadata.k");
    expect((await a.conversations.retrieve(conv.id)).metadata).toEqual({ ["k".repeat(64)]: "v".repeat(512) });
  });

  test("another tenant's conversation is not found, by every method", async () => {
    const theirs = await b.conversations.create({ items: [user("Secret")] });
    const items = await b.conversations.items.list(theirs.id);
    const itemId = items.data[0]!.id!;
    const attempts = [
      () => a.conversations.retrieve(theirs.id),
      () => a.conversations.update(theirs.id, { metadata: { mine: "yes" } }),
      () => a.conversations.items.list(theirs.id),
      () => a.conversations.items.create(theirs.id, { items: [user("Mine")] }),
      () => a.conversations.items.retrieve(itemId, { conversation_id: theirs.id }),
      () => a.conversations.items.delete(itemId, { conversation_id: theirs.id }),
      () => a.conversations.delete(theirs.id),
    ];
    for (const attempt of attempts) expect(await failure(attempt())).toBeInstanceOf(NotFoundError);
    expect((await b.conversations.items.list(theirs.id)).data.map((i) => i.id)).toEqual([itemId]);
    expect((await b.conversations.retrieve(theirs.id)).metadata).toEqual({});
  });
});

describe("items", () => {
  test("at most 20 items a request, on create and on add", async () => {
    const twenty = Array.from({ length: 20 }, (_, i) => user(`m${i}`));
    const conv = await a.conversations.create({ items: twenty });
    expect((await allItems(conv.id)).length).toBe(20);
    const tooMany = await failure(a.conversations.create({ items: [...twenty, user("m20")] }));
    expect(tooMany).toBeInstanceOf(BadRequestError);
    expect(tooMany.param).toBe("items");
    const adding = await failure(a.conversations.items.create(conv.id, { items: [...twenty, user("m20")] }));
    expect(adding).toBeInstanceOf(BadRequestError);
    expect((await allItems(conv.id)).length).toBe(20);
  });

  test("pages newest first by default; after and order page through them; retrieve and an unknown item", async () => {
    const conv = await a.conversations.create({ items: [user("one"), user("two")] });
    const added = await a.conversations.items.create(conv.id, { items: [user("three"), user("four"), user("five")] });
    expect(added.object).toBe("list");
    expect(added.data.map((i) => (i.type === "message" ? i.content : null))).toEqual([
      [{ type: "input_text", text: "three" }],
      [{ type: "input_text", text: "four" }],
      [{ type: "input_text", text: "five" }],
    ]);
    expect(added.first_id).toBe(added.data[0]!.id);
    expect(added.last_id).toBe(added.data[2]!.id);

    const texts = (page: { data: OpenAI.Conversations.ConversationItem[] }) =>
      page.data.map((i) => (i.type === "message" && i.content[0]!.type === "input_text" ? i.content[0]!.text : i.type));
    const newest = await a.conversations.items.list(conv.id, { limit: 2 });
    expect(texts(newest)).toEqual(["five", "four"]);
    expect(newest.has_more).toBe(true);
    const next = await a.conversations.items.list(conv.id, { limit: 2, after: newest.last_id });
    expect(texts(next)).toEqual(["three", "two"]);
    const last = await a.conversations.items.list(conv.id, { limit: 2, after: next.last_id });
    expect(texts(last)).toEqual(["one"]);
    expect(last.has_more).toBe(false);
    const oldest = await a.conversations.items.list(conv.id, { order: "asc", limit: 2 });
    expect(texts(oldest)).toEqual(["one", "two"]);
    expect(texts(await a.conversations.items.list(conv.id, { order: "asc", after: oldest.last_id }))).toEqual([
      "three",
      "four",
      "five",
    ]);
    expect((await allItems(conv.id)).map((i) => i.id)).toEqual([
      ...oldest.data.map((i) => i.id),
      ...added.data.map((i) => i.id),
    ]);

    const item = await a.conversations.items.retrieve(added.data[1]!.id!, { conversation_id: conv.id });
    expect(item).toEqual(added.data[1]);
    expect(await failure(a.conversations.items.retrieve("msg_nope", { conversation_id: conv.id }))).toBeInstanceOf(
      NotFoundError,
    );
    const badAfter = await failure(a.conversations.items.list(conv.id, { after: "msg_nope" }));
    expect(badAfter).toBeInstanceOf(BadRequestError);
    expect(badAfter.param).toBe("after");
    const badLimit = await failure(a.conversations.items.list(conv.id, { limit: 101 }));
    expect(badLimit).toBeInstanceOf(BadRequestError);
    expect(badLimit.param).toBe("limit");
  });

  test("images: stored as the message's attachments, their address shown when include asks for it; bad bytes are a 400", async () => {
    const data = `data:image/png;base64,${png(8, 8).toString("base64")}`;
    const conv = await a.conversations.create({
      items: [
        {
          type: "message",
          role: "user",
          content: [
            { type: "input_text", text: "What is this?" },
            { type: "input_image", image_url: data, detail: "auto" },
            { type: "input_image", image_url: "https://example.com/cat.png", detail: "auto" },
          ],
        },
      ],
    });
    const stored = (await loopd("GET", `/conversations/${conv.id}/messages`)).body.data[0];
    const attachment = stored.content[1].attachment_id as string;
    expect(stored.content[1]).toMatchObject({ type: "image", media_type: "image/png", width: 8, height: 8 });
    const [plain] = (await a.conversations.items.list(conv.id)).data;
    expect(plain).toMatchObject({
      content: [
        { type: "input_text", text: "What is this?" },
        { type: "input_image", image_url: null },
        { type: "input_image", image_url: "https://example.com/cat.png" },
      ],
    });
    const [shown] = (await a.conversations.items.list(conv.id, { include: ["message.input_image.image_url"] })).data;
    const url = (shown as OpenAI.Conversations.Message).content[1] as { image_url: string };
    expect(url.image_url).toBe(`/conversations/${conv.id}/attachments/${attachment}`);
    const bytes = await fetch(`${f.loopd.url}${url.image_url}`, { headers: { authorization: `Bearer ${keyA}` } });
    expect(Buffer.from(await bytes.arrayBuffer())).toEqual(png(8, 8));

    const bad = await failure(
      a.conversations.items.create(conv.id, {
        items: [
          user("fine"),
          {
            type: "message",
            role: "user",
            content: [{ type: "input_image", image_url: "data:image/png;base64,bm90IGEgcG5n", detail: "auto" }],
          },
        ],
      }),
    );
    expect(bad).toBeInstanceOf(BadRequestError);
    expect(bad.param).toBe("items[1].content[0]");
    expect((await allItems(conv.id)).length).toBe(1);
  });

  test("function calls and their outputs: an output answers a waiting call, before any other message, once", async () => {
    const conv = await a.conversations.create({ items: [user("Weather in Paris?")] });
    const call = {
      type: "function_call" as const,
      call_id: "call_w1",
      name: "get_weather",
      arguments: '{"city":"Paris"}',
    };
    const output = { type: "function_call_output" as const, call_id: "call_w1", output: "18 °C" };

    const orphan = await failure(a.conversations.items.create(conv.id, { items: [output] }));
    expect(orphan).toBeInstanceOf(BadRequestError);
    expect(orphan.param).toBe("items[0].call_id");

    await a.conversations.items.create(conv.id, { items: [call] });
    const between = await failure(a.conversations.items.create(conv.id, { items: [user("Well?")] }));
    expect(between).toBeInstanceOf(BadRequestError);
    expect(between.param).toBe("items[0]");
    const again = await failure(a.conversations.items.create(conv.id, { items: [call] }));
    expect(again).toBeInstanceOf(BadRequestError);

    await a.conversations.items.create(conv.id, {
      items: [output, { type: "message", role: "assistant", content: "It is 18 °C in Paris." }],
    });
    const twice = await failure(a.conversations.items.create(conv.id, { items: [output] }));
    expect(twice).toBeInstanceOf(BadRequestError);

    expect((await allItems(conv.id)).map((i) => [i.type, "call_id" in i ? i.call_id : null])).toEqual([
      ["message", null],
      ["function_call", "call_w1"],
      ["function_call_output", "call_w1"],
      ["message", null],
    ]);
    const stored = (await loopd("GET", `/conversations/${conv.id}/messages`)).body.data;
    expect(stored.map((m: { role: string }) => m.role)).toEqual(["user", "assistant", "tool", "assistant"]);
    expect(stored[1].content).toEqual([
      { type: "tool_call", id: "call_w1", name: "get_weather", input: { city: "Paris" } },
    ]);
  });

  test("a delete that would leave a call without its output, or an output without its call, is a 400; a message's is not", async () => {
    const conv = await a.conversations.create({
      items: [
        user("Weather?"),
        { type: "function_call", call_id: "call_d1", name: "get_weather", arguments: "{}" },
        { type: "function_call_output", call_id: "call_d1", output: "sunny" },
        user("Thanks. And tomorrow?"),
      ],
    });
    const items = await allItems(conv.id);
    for (const item of items.filter((i) => i.type !== "message")) {
      const refused = await failure(a.conversations.items.delete(item.id!, { conversation_id: conv.id }));
      expect(refused, item.type).toBeInstanceOf(BadRequestError);
    }
    const gone = items[3]!;
    const answered = await a.conversations.items.delete(gone.id!, { conversation_id: conv.id });
    expect(answered).toMatchObject({ id: conv.id, object: "conversation" });
    expect((await allItems(conv.id)).map((i) => i.id)).toEqual(items.slice(0, 3).map((i) => i.id));
    expect(await failure(a.conversations.items.retrieve(gone.id!, { conversation_id: conv.id }))).toBeInstanceOf(
      NotFoundError,
    );
    expect(await failure(a.conversations.items.delete(gone.id!, { conversation_id: conv.id }))).toBeInstanceOf(
      NotFoundError,
    );
    // loopd's history keeps its place (seqs without gaps), emptied and never sent again.
    const stored = (await loopd("GET", `/conversations/${conv.id}/messages`)).body.data;
    expect(stored.at(-1)).toMatchObject({ seq: 4, role: "user", excluded: "deleted", content: [] });

    // A call still waiting for its output may go: nothing is left unpaired.
    await a.conversations.items.create(conv.id, {
      items: [{ type: "function_call", call_id: "call_d2", name: "get_weather", arguments: "{}" }],
    });
    await a.conversations.items.delete("fc_call_d2", { conversation_id: conv.id });
    expect((await allItems(conv.id)).map((i) => i.id)).toEqual(items.slice(0, 3).map((i) => i.id));
    await a.conversations.items.create(conv.id, { items: [user("Next week?")] });
  });
});

describe.each(["anthropic", "openai"] as const)("with the loop (%s)", (provider) => {
  /** A conversation made through /v1, on `provider`, with the server's tools and `approval_required`. */
  async function conversation(items: OpenAI.Responses.ResponseInputItem[], settings: object = {}) {
    const conv = await a.conversations.create({ items });
    expect((await loopd("PATCH", `/conversations/${conv.id}`, { provider, ...settings })).status).toBe(200);
    return conv.id;
  }

  test("a run's tool calls show as mcp_call items with their output; its text as an assistant message", async () => {
    const id = await conversation([user("What is 6*7?")]);
    f.llm.script({ toolCalls: [{ name: "calculate", input: { expression: "6*7" } }] }, { text: "It is 42." });
    const sent = await loopd("POST", `/conversations/${id}/messages`, { content: "Please work it out." });
    expect(sent.body.run.status).toBe("completed");
    const items = await allItems(id);
    expect(items.map((i) => i.type)).toEqual(["message", "message", "mcp_call", "message"]);
    const call = items[2] as OpenAI.Conversations.ConversationItem.McpCall;
    expect(call).toMatchObject({
      server_label: "loopd",
      name: "calculate",
      arguments: JSON.stringify({ expression: "6*7" }),
      error: null,
      status: "completed",
    });
    expect(JSON.parse(call.output!)).toMatchObject({ result: 42 });
    expect(items[3]).toMatchObject({ role: "assistant", content: [{ type: "output_text", text: "It is 42." }] });

    // Deleting the call takes its result with it: the next model call is sent neither, and takes the history.
    await a.conversations.items.delete(call.id, { conversation_id: id });
    expect((await allItems(id)).map((i) => i.type)).toEqual(["message", "message", "message"]);
    // A run's answer is an item too.
    await a.conversations.items.delete(items[3]!.id!, { conversation_id: id });
    expect((await allItems(id)).map((i) => i.id)).toEqual([items[0]!.id, items[1]!.id]);
    const stored = (await loopd("GET", `/conversations/${id}/messages`)).body.data;
    // The call's message (left with nothing), its result and the answer: kept in their places, marked.
    expect(stored.map((m: { role: string; excluded?: string }) => [m.role, m.excluded ?? null])).toEqual([
      ["user", null],
      ["user", null],
      ["assistant", "deleted"],
      ["tool", "deleted"],
      ["assistant", "deleted"],
    ]);
    f.llm.script({ text: "Sure." });
    const next = await loopd("POST", `/conversations/${id}/messages`, { content: "Again?" });
    expect(next.body.run.status).toBe("completed");
    const request = JSON.stringify(f.llm.requests.at(-1)!.body);
    expect(request).not.toContain('calculate","input');
    expect(request).not.toMatch(/"tool_use"|"tool_calls"|"role":"tool"/);
  });

  test("a client tool's calls and the outputs the application gave show as function_call and function_call_output", async () => {
    const id = await conversation([user("Book a table")], {
      client_tools: [{ name: "book_table", description: "Books a table", input_schema: { type: "object" } }],
    });
    f.llm.script({ toolCalls: [{ id: "call_book1", name: "book_table", input: { people: 2 } }] });
    const sent = await loopd("POST", `/conversations/${id}/messages`, { content: "For two, tonight." });
    expect(sent.body.run.status).toBe("requires_action");
    f.llm.script({ text: "Booked." });
    const answered = await loopd("POST", `/conversations/${id}/runs/${sent.body.run.id}/actions`, {
      tool_outputs: [{ tool_call_id: "call_book1", output: "table 7" }],
    });
    expect(answered.status).toBe(200);
    expect(answered.body.run.status).toBe("completed");
    const items = await allItems(id);
    expect(items.map((i) => i.type)).toEqual([
      "message",
      "message",
      "function_call",
      "function_call_output",
      "message",
    ]);
    expect(items[2]).toMatchObject({ call_id: "call_book1", name: "book_table", arguments: '{"people":2}' });
    expect(items[3]).toMatchObject({ id: "fco_call_book1", call_id: "call_book1", output: "table 7" });
    expect(await failure(a.conversations.items.delete(items[3]!.id!, { conversation_id: id }))).toBeInstanceOf(
      BadRequestError,
    );
  });

  test("items added through /v1 make a history the model takes, and a deleted message is never sent", async () => {
    const id = await conversation([
      user("Forget this: my PIN is 1234"),
      user("Weather?"),
      { type: "function_call", call_id: "call_x1", name: "get_weather", arguments: '{"city":"Oslo"}' },
      { type: "function_call_output", call_id: "call_x1", output: "-3 °C" },
      { type: "message", role: "assistant", content: "It is -3 °C in Oslo." },
    ]);
    const first = (await allItems(id))[0]!;
    await a.conversations.items.delete(first.id!, { conversation_id: id });
    f.llm.script({ text: "Cold indeed." });
    const sent = await loopd("POST", `/conversations/${id}/messages`, { content: "Cold?" });
    expect(sent.body.run.status).toBe("completed");
    const request = JSON.stringify(f.llm.requests.at(-1)!.body);
    expect(request).not.toContain("1234");
    expect(request).toContain("-3 °C");
    expect(request).toContain("call_x1");
  });

  test("while a run is open items are neither added nor deleted (409); its pending call shows as an approval request", async () => {
    const id = await conversation([user("Hi")], { approval_required: ["calculate"] });
    f.llm.script({ toolCalls: [{ name: "calculate", input: { expression: "1+1" } }] });
    const sent = await loopd("POST", `/conversations/${id}/messages`, { content: "Add." });
    expect(sent.body.run.status).toBe("requires_action");
    const items = await allItems(id);
    expect(items.at(-1)).toMatchObject({ type: "mcp_approval_request", name: "calculate", server_label: "loopd" });
    const adding = await failure(a.conversations.items.create(id, { items: [user("More")] }));
    expect(adding).toBeInstanceOf(ConflictError);
    expect(adding.code).toBe("conversation_busy");
    expect(await failure(a.conversations.items.delete(items[0]!.id!, { conversation_id: id }))).toBeInstanceOf(
      ConflictError,
    );
    // Deleting the conversation stops its run.
    await a.conversations.delete(id);
    expect((await loopd("GET", `/runs/${sent.body.run.id}`)).status).toBe(404);
  });
});
