import Anthropic from "@anthropic-ai/sdk";
import OpenAI from "openai";
import type { InjectOptions } from "fastify";
import { describe, expect, test } from "vitest";
import { api } from "../support/helpers/api.js";
import { expectError } from "../support/helpers/expect-error.js";
import { captureLogs } from "../support/helpers/log-sink.js";
import { useLoopd } from "../support/helpers/use-loopd.js";
import { toolCallIdsIn, toolResultsIn } from "../support/helpers/wire.js";

const { logger, lines: logLines } = captureLogs("info");
const f = useLoopd({
  logger,
  env: { BODY_LIMIT_BYTES: "4096", LOG_LEVEL: "info" },
});

const inject = (opts: InjectOptions) => f.loopd.app.inject(opts);
const client = () => api(f.loopd.app);

describe("conversations", () => {
  test("a conversation created with no body gets the defaults", async () => {
    const res = await inject({ method: "POST", url: "/conversations" });
    expect(res.statusCode).toBe(201);
    expect(res.json()).toMatchObject({
      id: expect.stringMatching(/^conv_/),
      title: null,
      system: null,
      provider: "mock",
      tools: ["get_current_time", "calculate", "read_file", "list_files", "search_files"],
      metadata: {},
      message_count: 0,
      active_run_id: null,
    });
  });

  test("an unknown provider or tool is a 400 naming the field, and creates nothing", async () => {
    const before = (await inject({ method: "GET", url: "/conversations?limit=100" })).json().data.length;
    const provider = expectError(
      await inject({ method: "POST", url: "/conversations", payload: { provider: "gemini" } }),
      400,
      "invalid_request",
    );
    expect(provider.details.field).toBe("body.provider");
    const tool = expectError(
      await inject({ method: "POST", url: "/conversations", payload: { tools: ["calculate", "rm_rf"] } }),
      400,
      "invalid_request",
    );
    expect(tool.details).toMatchObject({ field: "body.tools", unknown: ["rm_rf"] });
    expect(tool.message).toMatch(/rm_rf/);
    expect((await inject({ method: "GET", url: "/conversations?limit=100" })).json().data.length).toBe(before);
  });

  test("malformed JSON, a wrong content type and an oversized body are client errors", async () => {
    expectError(
      await inject({
        method: "POST",
        url: "/conversations",
        headers: { "content-type": "application/json" },
        payload: "{not json",
      }),
      400,
      "invalid_request",
    );
    expectError(
      await inject({ method: "POST", url: "/conversations", payload: [1, 2] as any }),
      400,
      "invalid_request",
    );
    expectError(
      await inject({ method: "POST", url: "/conversations", payload: { system: "x".repeat(10_000) } }),
      413,
      "payload_too_large",
    );
    const res = await inject({
      method: "POST",
      url: "/conversations",
      headers: { "content-type": "text/plain" },
      payload: "hello",
    });
    expect(res.statusCode).toBeGreaterThanOrEqual(400);
    expect(res.statusCode).toBeLessThan(500);
  });

  test("listing is newest first and pages with a cursor", async () => {
    const ids: string[] = [];
    for (let i = 0; i < 5; i++) ids.push((await client().createConversation({ title: `page ${i}` })).id);
    const seen: string[] = [];
    let cursor: string | null = null;
    do {
      const res = await inject({ method: "GET", url: `/conversations?limit=2${cursor ? `&cursor=${cursor}` : ""}` });
      expect(res.statusCode).toBe(200);
      const page = res.json();
      expect(page.data.length).toBeLessThanOrEqual(2);
      seen.push(...page.data.map((c: any) => c.id));
      cursor = page.next_cursor;
    } while (cursor);
    expect(seen.slice(0, 5)).toEqual([...ids].reverse());
    expect(new Set(seen).size).toBe(seen.length);
    expectError(await inject({ method: "GET", url: "/conversations?cursor=garbage" }), 400, "invalid_request");
    expectError(await inject({ method: "GET", url: "/conversations?limit=0" }), 400, "invalid_request");
    expectError(await inject({ method: "GET", url: "/conversations?limit=abc" }), 400, "invalid_request");
  });

  test("an unknown conversation, run or route is 404", async () => {
    expectError(await inject({ method: "GET", url: "/conversations/conv_nope" }), 404, "not_found");
    expectError(
      await inject({ method: "POST", url: "/conversations/conv_nope/messages", payload: { content: "hi" } }),
      404,
      "not_found",
    );
    expectError(await inject({ method: "GET", url: "/conversations/conv_nope/messages" }), 404, "not_found");
    expectError(await inject({ method: "GET", url: "/conversations/conv_nope/runs" }), 404, "not_found");
    const conv = await client().createConversation();
    expectError(await inject({ method: "GET", url: `/conversations/${conv.id}/runs/run_nope` }), 404, "not_found");
    expectError(
      await inject({ method: "POST", url: `/conversations/${conv.id}/runs/run_nope/cancel` }),
      404,
      "not_found",
    );
    expectError(
      await inject({ method: "GET", url: `/conversations/${conv.id}/runs/run_nope/events` }),
      404,
      "not_found",
    );
    expectError(await inject({ method: "GET", url: "/no/such/route" }), 404, "not_found");
  });

  test("a run is not visible through another conversation", async () => {
    const a = await client().createConversation({ provider: "openai" });
    const b = await client().createConversation();
    f.llm.script({ text: "hi" });
    const run = (await client().send(a.id, { content: "hi" })).json().run;
    expect((await inject({ method: "GET", url: `/conversations/${a.id}/runs/${run.id}` })).statusCode).toBe(200);
    expectError(await inject({ method: "GET", url: `/conversations/${b.id}/runs/${run.id}` }), 404, "not_found");
  });

  test("DELETE removes the conversation with its messages, runs and events; again is 404", async () => {
    const conv = await client().createConversation({ provider: "anthropic" });
    f.llm.script({ text: "bye" });
    const run = (await client().send(conv.id, { content: "hi" })).json().run;
    expect((await inject({ method: "DELETE", url: `/conversations/${conv.id}` })).statusCode).toBe(204);
    expectError(await inject({ method: "GET", url: `/conversations/${conv.id}` }), 404, "not_found");
    expectError(await inject({ method: "GET", url: `/conversations/${conv.id}/runs/${run.id}` }), 404, "not_found");
    expectError(await inject({ method: "DELETE", url: `/conversations/${conv.id}` }), 404, "not_found");
    expect(await f.loopd.services.store.events.lastSeq(run.id)).toBe(0);
    expect(await f.loopd.services.store.messages.history(conv.id)).toEqual([]);
  });
});

describe("sending a message", () => {
  test.each([
    [{}, "body.content"],
    [{ content: "" }, "body.content"],
    [{ content: "   " }, "body.content"],
    [{ content: [] }, "body.content"],
    [{ content: [{ type: "image", url: "x" }] }, "body.content[0].source"],
    [{ content: "hi", max_steps: 0 }, "body.max_steps"],
    [{ content: "hi", max_steps: 1.5 }, "body.max_steps"],
    [{ content: "hi", tool_choice: "sometimes" }, "body.tool_choice"],
    [{ content: "hi", stream: "yes" }, "body.stream"],
  ])("%j is a 400 naming %s and changes nothing", async (body, field) => {
    const conv = await client().createConversation();
    const error = expectError(await client().send(conv.id, body), 400, "invalid_request");
    expect(error.details.field).toBe(field);
    expect((await inject({ method: "GET", url: `/conversations/${conv.id}` })).json().message_count).toBe(0);
    expect((await inject({ method: "GET", url: `/conversations/${conv.id}/runs` })).json().data).toEqual([]);
  });

  test("tool_choice naming a tool the conversation lacks is a 400 and changes nothing", async () => {
    const conv = await client().createConversation({ tools: ["calculate"] });
    const error = expectError(
      await client().send(conv.id, { content: "hi", tool_choice: { name: "read_file" } }),
      400,
      "invalid_request",
    );
    expect(error.details.field).toBe("tool_choice.name");
    expect((await inject({ method: "GET", url: `/conversations/${conv.id}` })).json().message_count).toBe(0);
  });

  test("the offline mock provider uses the built-in tools when asked", async () => {
    const conv = await client().createConversation();
    const res = (await client().send(conv.id, { content: "What time is it in Tokyo?" })).json();
    expect(res.run).toMatchObject({ status: "completed", provider: "mock" });
    expect(res.messages.map((m: any) => m.role)).toEqual(["user", "assistant", "tool", "assistant"]);
    expect(res.messages[1].content[0]).toMatchObject({
      type: "tool_call",
      name: "get_current_time",
      input: { timezone: "Asia/Tokyo" },
    });
    expect(res.output_text).toMatch(/Asia\/Tokyo/);
    const sum = (await client().send(conv.id, { content: "What is 12*7?" })).json();
    expect(sum.output_text).toMatch(/84/);
  });

  test("history pages by after_seq", async () => {
    const conv = await client().createConversation();
    await client().send(conv.id, { content: "What is 2+2?" });
    const first = (await inject({ method: "GET", url: `/conversations/${conv.id}/messages?limit=2` })).json();
    expect(first.data.map((m: any) => m.seq)).toEqual([1, 2]);
    expect(first.next_after_seq).toBe(2);
    const rest = (
      await inject({ method: "GET", url: `/conversations/${conv.id}/messages?after_seq=2&limit=100` })
    ).json();
    expect(rest.data.map((m: any) => m.seq)).toEqual([3, 4]);
    expect(rest.next_after_seq).toBeNull();
    expectError(
      await inject({ method: "GET", url: `/conversations/${conv.id}/messages?after_seq=-1` }),
      400,
      "invalid_request",
    );
    expectError(
      await inject({ method: "GET", url: `/conversations/${conv.id}/messages?format=gemini` }),
      400,
      "invalid_request",
    );
  });
});

describe("history in a provider's own format", () => {
  async function conversationWithToolUse(provider: "anthropic" | "openai") {
    const conv = await client().createConversation({ provider, system: "Be brief." });
    f.llm.script(
      { text: "Checking.", toolCalls: [{ name: "calculate", input: { expression: "2*21" } }] },
      { text: "42" },
    );
    await client().send(conv.id, { content: "2*21?" });
    return conv;
  }

  test("format=anthropic is accepted as is by messages.create", async () => {
    const conv = await conversationWithToolUse("anthropic");
    const body = (await inject({ method: "GET", url: `/conversations/${conv.id}/messages?format=anthropic` })).json();
    expect(body.format).toBe("anthropic");
    expect(body.system).toBe("Be brief.");
    expect(body.messages.map((m: any) => m.role)).toEqual(["user", "assistant", "user", "assistant"]);
    expect(body.messages[1].content[1]).toMatchObject({
      type: "tool_use",
      name: "calculate",
      input: { expression: "2*21" },
    });
    expect(body.messages[2].content[0]).toMatchObject({
      type: "tool_result",
      tool_use_id: body.messages[1].content[1].id,
    });

    f.llm.reset();
    f.llm.script({ text: "ok" });
    const sdk = new Anthropic({ apiKey: "test", baseURL: f.llm.url });
    const reply = await sdk.messages.create({
      model: "claude-sonnet-4-6",
      max_tokens: 100,
      system: body.system,
      messages: [...body.messages, { role: "user", content: "thanks" }],
    });
    expect(reply.content[0]).toMatchObject({ type: "text", text: "ok" });
  });

  test("format=openai is accepted as is by chat.completions.create", async () => {
    const conv = await conversationWithToolUse("openai");
    const body = (await inject({ method: "GET", url: `/conversations/${conv.id}/messages?format=openai` })).json();
    expect(body.format).toBe("openai");
    expect(body.messages.map((m: any) => m.role)).toEqual(["system", "user", "assistant", "tool", "assistant"]);
    const call = body.messages[2].tool_calls[0];
    expect(call).toMatchObject({ type: "function", function: { name: "calculate" } });
    expect(JSON.parse(call.function.arguments)).toEqual({ expression: "2*21" });
    expect(body.messages[3]).toMatchObject({ role: "tool", tool_call_id: call.id });

    f.llm.reset();
    f.llm.script({ text: "ok" });
    const sdk = new OpenAI({ apiKey: "test", baseURL: `${f.llm.url}/v1` });
    const reply = await sdk.chat.completions.create({
      model: "gpt-4o-mini",
      messages: [...body.messages, { role: "user", content: "thanks" }],
    });
    expect(reply.choices[0]!.message.content).toBe("ok");
  });

  test("a conversation switched from Anthropic to OpenAI sends its history, ids intact, to the new provider", async () => {
    const conv = await conversationWithToolUse("anthropic");
    const callId = (await client().history(conv.id))[1].content.find((b: any) => b.type === "tool_call").id;
    const patched = await inject({
      method: "PATCH",
      url: `/conversations/${conv.id}`,
      payload: { provider: "openai" },
    });
    expect(patched.statusCode).toBe(200);
    expect(patched.json()).toMatchObject({ provider: "openai", model: "gpt-4o-mini" });

    f.llm.reset();
    f.llm.script({ text: "Switched." });
    const res = (await client().send(conv.id, { content: "Still there?" })).json();
    expect(res.run).toMatchObject({ status: "completed", provider: "openai" });
    expect(f.llm.requests[0]!.api).toBe("openai");
    expect(toolCallIdsIn(f.llm.requests[0]!)).toEqual([callId]);
    expect(toolResultsIn(f.llm.requests[0]!).map((r) => r.id)).toEqual([callId]);
  });
});

describe("operations", () => {
  test("healthz answers while the process is up; readyz when the database answers and new runs are taken", async () => {
    const res = await inject({ method: "GET", url: "/healthz" });
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual({ status: "ok" });
    const ready = await inject({ method: "GET", url: "/readyz" });
    expect(ready.statusCode).toBe(200);
    expect(ready.json()).toEqual({ status: "ready" });
  });

  test("openapi.json describes the contract's routes", async () => {
    const doc = (await inject({ method: "GET", url: "/openapi.json" })).json();
    expect(doc.openapi).toMatch(/^3\./);
    for (const path of [
      "/conversations",
      "/conversations/{id}",
      "/conversations/{id}/messages",
      "/conversations/{id}/runs/{run_id}/cancel",
      "/conversations/{id}/runs/{run_id}/events",
    ]) {
      expect(Object.keys(doc.paths)).toContain(path);
    }
    expect(doc.paths["/conversations/{id}/messages"].post.requestBody).toBeDefined();
  });

  test("a Last-Event-ID that is not a number is a 400", async () => {
    const conv = await client().createConversation();
    const run = (await client().send(conv.id, { content: "hi" })).json().run;
    const res = await inject({
      method: "GET",
      url: `/conversations/${conv.id}/runs/${run.id}/events`,
      headers: { "last-event-id": "abc" },
    });
    expectError(res, 400, "invalid_request");
  });

  test("logs have one line per model call, tool call and run, and never an API key", async () => {
    logLines.length = 0;
    const conv = await client().createConversation({ provider: "anthropic" });
    f.llm.script({ toolCalls: [{ name: "calculate", input: { expression: "1+1" } }] }, { text: "2" });
    const run = (
      await client().send(conv.id, { content: "1+1?" }, { authorization: "Bearer fake-secret-do-not-log" })
    ).json().run;
    const mine = logLines.filter((l) => l.run_id === run.id);
    const modelCalls = mine.filter((l) => l.msg === "model call");
    expect(modelCalls).toHaveLength(2);
    expect(modelCalls[0]).toMatchObject({
      step: 1,
      provider: "anthropic",
      stop_reason: "tool_use",
      usage: expect.any(Object),
      ms: expect.any(Number),
    });
    const toolCalls = mine.filter((l) => l.msg === "tool call");
    expect(toolCalls).toEqual([
      expect.objectContaining({
        name: "calculate",
        status: "ok",
        tool_call_id: expect.any(String),
        duration_ms: expect.any(Number),
        result_chars: expect.any(Number),
      }),
    ]);
    expect(mine.filter((l) => l.msg === "run finished")).toEqual([
      expect.objectContaining({ status: "completed", steps: 2 }),
    ]);
    const everything = JSON.stringify(logLines);
    expect(everything).not.toContain("test-anthropic-key");
    expect(everything).not.toContain("test-openai-key");
    expect(everything).not.toContain("fake-secret-do-not-log");
  });
});

describe("input Postgres cannot store or count", () => {
  test.each([
    ["a NUL in the content", { content: "a\u0000b" }, "body.content"],
    ["a lone surrogate in a text block", { content: [{ type: "text", text: "x\ud800y" }] }, "body.content[0].text"],
  ])("%s is a 400 and changes nothing", async (_what, body, field) => {
    const conv = await client().createConversation();
    const error = expectError(await client().send(conv.id, body), 400, "invalid_request");
    expect(error.details.field).toBe(field);
    expect((await inject({ method: "GET", url: `/conversations/${conv.id}` })).json().message_count).toBe(0);
  });

  test("a NUL in a title or in metadata is a 400", async () => {
    expectError(
      await inject({ method: "POST", url: "/conversations", payload: { title: "a\u0000" } }),
      400,
      "invalid_request",
    );
    expectError(
      await inject({ method: "POST", url: "/conversations", payload: { metadata: { k: "v\u0000" } } }),
      400,
      "invalid_request",
    );
  });

  test("numbers and cursors out of range are 400s", async () => {
    const conv = await client().createConversation();
    expectError(
      await inject({ method: "GET", url: `/conversations/${conv.id}/messages?after_seq=99999999999` }),
      400,
      "invalid_request",
    );
    const far = Buffer.from(`+275760-09-13T00:00:00.000Z|conv_x`).toString("base64url");
    const early = Buffer.from(`0000-01-01T00:00:00.000Z|conv_x`).toString("base64url");
    expectError(await inject({ method: "GET", url: `/conversations?cursor=${far}` }), 400, "invalid_request");
    expectError(await inject({ method: "GET", url: `/conversations?cursor=${early}` }), 400, "invalid_request");
  });

  test("a NUL produced by a tool is mended, not a failed run", async () => {
    const conv = await client().createConversation({ provider: "openai", tools: ["calculate"] });
    f.llm.script(
      { toolCalls: [{ name: "calculate", input: { expression: "1+" }, id: "call_with_nul_result_0001" }] },
      { text: "a\u0000b" },
    );
    const res = (await client().send(conv.id, { content: "go" })).json();
    expect(res.run.status).toBe("completed");
    expect(res.output_text).toBe("a\ufffdb");
  });
});

test("three identical retries sent at once with one Idempotency-Key all get the same run", async () => {
  const conv = await client().createConversation({ provider: "openai" });
  f.llm.script({ text: "only once", chunkDelayMs: 20 });
  const key = `concurrent-${Date.now()}`;
  const replies = await Promise.all(
    [0, 1, 2].map(() => client().send(conv.id, { content: "Once" }, { "idempotency-key": key })),
  );
  expect(replies.map((r) => r.statusCode)).toEqual([200, 200, 200]);
  expect(new Set(replies.map((r) => r.json().run.id)).size).toBe(1);
  expect(f.llm.requests).toHaveLength(1);
  expect((await inject({ method: "GET", url: `/conversations/${conv.id}` })).json().message_count).toBe(2);
});
