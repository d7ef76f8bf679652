/**
 * WebSocket mode of `/v1/responses` at its edges: the key on the upgrade, bad
 * messages answered with error events (the socket lives on), one response at
 * a time, the message size, the tenant's stream share, a client that leaves
 * mid-response, and the server's shutdown.
 */
import { describe, expect, test, vi } from "vitest";
import { useLoopd } from "../support/helpers/use-loopd.js";
import { openResponseSocket, refusedUpgrade, type SocketMessage } from "../support/helpers/response-socket.js";
import { sseEventsOf } from "../support/helpers/sse-events.js";
import { MAX_KEPT_RESPONSES } from "../../src/openai-api/responses/kept-responses.js";
import { expectSchema } from "../support/open-responses/validate-open-responses.js";

const f = useLoopd({
  listen: true,
  env: {
    API_KEYS_REQUIRED: "true",
    MOCK_PROVIDER: "true",
    MAX_STREAMS_PER_TENANT: "2",
    BODY_LIMIT_BYTES: "65536",
    MAX_ATTACHMENT_BYTES: "65536",
    MAX_ATTACHMENTS_PER_MESSAGE: "1",
  },
});

const keys: Record<string, string> = {};
const keyOf = async (tenant: string) =>
  (keys[tenant] ??= (await f.loopd.services.store.keys.create({ tenant, name: null })).key);
const open = async (tenant: string) => openResponseSocket(f.loopd.url, await keyOf(tenant));
const model = "openai/gpt-4o-mini";

/** The one message a refused message gets: an error event in the specification's shape. */
const refusal = (messages: SocketMessage[]) => {
  expect(messages).toHaveLength(1);
  expectSchema("WebSocketErrorEvent", messages[0]);
  return messages[0] as { type: string; status: number; error: { type: string; code: string; param: string | null } };
};

describe("the upgrade", () => {
  test("without a key, or with a wrong one: 401, no socket", async () => {
    expect(await refusedUpgrade(f.loopd.url)).toBe(401);
    expect(await refusedUpgrade(f.loopd.url, { authorization: "Bearer lpd_wrong" })).toBe(401);
  });

  test("past the tenant's stream share: 429; another tenant's sockets are not counted", async () => {
    const [a, b] = [await open("share"), await open("share")];
    expect(await refusedUpgrade(f.loopd.url, { authorization: `Bearer ${await keyOf("share")}` })).toBe(429);
    const other = await open("other-share");
    for (const ws of [a, b, other]) ws.socket.close();
  });

  test("a plain GET without the upgrade: 405 as before, POST being the method", async () => {
    const res = await fetch(`${f.loopd.url}/v1/responses`, {
      headers: { authorization: `Bearer ${await keyOf("acme")}` },
    });
    expect(res.status).toBe(405);
    expect(((await res.json()) as { error: unknown }).error).toMatchObject({ type: "invalid_request_error" });
  });
});

describe("messages", () => {
  test("not JSON, not an object, of another type, binary, a bad field, background: an error event each, and the socket goes on", async () => {
    const ws = await open("acme");
    const sendAndRead = async (message: string | Buffer) => {
      ws.socket.send(message);
      return refusal(await ws.turn());
    };
    expect(await sendAndRead("{not json")).toMatchObject({ status: 400, error: { code: "invalid_request" } });
    expect(await sendAndRead("[1, 2]")).toMatchObject({ status: 400 });
    expect(await sendAndRead(JSON.stringify({ type: "response.cancel" }))).toMatchObject({
      status: 400,
      error: { type: "invalid_request_error", param: "type" },
    });
    expect(await sendAndRead(Buffer.from([1, 2, 3]))).toMatchObject({ status: 400 });
    expect(
      await sendAndRead(JSON.stringify({ type: "response.create", model, input: "hi", temperature: 9 })),
    ).toMatchObject({ status: 400, error: { param: "temperature" } });
    expect(
      await sendAndRead(JSON.stringify({ type: "response.create", model, input: "hi", background: true })),
    ).toMatchObject({ status: 400, error: { param: "background" } });
    expect(refusal(await ws.create({ model: "agent:nobody", input: "hi" }))).toMatchObject({
      status: 404,
      error: { code: "model_not_found", param: "model" },
    });
    f.llm.script({ text: "Still here." });
    expect((await ws.create({ model, input: "hi", stream: true })).at(-1)?.type).toBe("response.completed");
    ws.socket.close();
  });

  test("a response.create while a response runs: refused with an error event, not started", async () => {
    const ws = await open("acme");
    f.llm.script({ text: "Slowly", stallAfterChunks: 1 });
    ws.send({ type: "response.create", model, store: false, input: "Take your time." });
    expect((await ws.next()).type).toBe("response.created");
    ws.send({ type: "response.create", model, store: false, input: "And this?" });
    let refused: SocketMessage | undefined;
    while (!refused) {
      const message = await ws.next();
      if (message.type === "error") refused = message;
    }
    expect(refusal([refused])).toMatchObject({ status: 400, error: { type: "invalid_request_error" } });
    expect(JSON.stringify(refused)).toContain("already in progress");
    expect(f.llm.requests).toHaveLength(1);
    ws.socket.close();
    await ws.closed;
  });

  test("past MAX_KEPT_RESPONSES store: false responses, the oldest is evicted (and its conversation deleted)", async () => {
    const ws = await open("keeper");
    const ids: string[] = [];
    for (let i = 0; i <= MAX_KEPT_RESPONSES; i++) {
      f.llm.script({ text: `Answer ${i}.` });
      const last = (await ws.create({ model, store: false, input: `Question ${i}.` })).at(-1)!;
      ids.push((last as unknown as { response: { id: string } }).response.id);
    }
    const conversations = await f.loopd.services.store.conversations.list("keeper", { limit: 100 });
    expect(conversations.rows).toHaveLength(MAX_KEPT_RESPONSES);
    expect(refusal(await ws.create({ model, store: false, previous_response_id: ids[0], input: "Hm?" }))).toMatchObject(
      {
        error: { code: "previous_response_not_found" },
      },
    );
    f.llm.script({ text: "Answer 1 again." });
    const next = await ws.create({ model, store: false, previous_response_id: ids[1], input: "Hm?" });
    expect(next.at(-1)?.type).toBe("response.completed");
    ws.socket.close();
  });

  test("a message over the size a create body may have closes the socket (1009)", async () => {
    const ws = await open("acme");
    ws.send({ type: "response.create", model, input: "x".repeat(400_000) });
    expect((await ws.closed).code).toBe(1009);
  });
});

describe("a client that leaves", () => {
  test("mid-response: a stored response's run goes on, and reads back completed", async () => {
    const ws = await open("leaver");
    f.llm.script({ text: "one two three four five six", chunkDelayMs: 40 });
    ws.send({ type: "response.create", model, input: "Count slowly." });
    const created = (await ws.next()) as unknown as { response: { id: string } };
    ws.socket.close();
    await ws.closed;
    const res = await fetch(`${f.loopd.url}/v1/responses/${created.response.id}?stream=true`, {
      headers: { authorization: `Bearer ${await keyOf("leaver")}` },
    });
    const events = sseEventsOf(await res.text());
    expect(events.at(-1)?.event).toBe("response.completed");
    const deltas = events.flatMap((e) =>
      e.event === "response.output_text.delta" ? [(e.data as { delta: string }).delta] : [],
    );
    expect(deltas.join("")).toBe("one two three four five six");
  });

  test("with store: false responses: every conversation they kept is deleted, a running one stopped", async () => {
    const ws = await open("forgetful");
    f.llm.script({ text: "Kept." }, { text: "Stuck", stallAfterChunks: 1 });
    expect((await ws.create({ model, store: false, input: "First." })).at(-1)?.type).toBe("response.completed");
    ws.send({ type: "response.create", model, store: false, input: "Second." });
    expect((await ws.next()).type).toBe("response.created");
    const conversations = async () =>
      (await f.loopd.services.store.conversations.list("forgetful", { limit: 10 })).rows;
    expect(await conversations()).toHaveLength(2);
    ws.socket.close();
    await vi.waitFor(async () => expect(await conversations()).toHaveLength(0), { timeout: 5000 });
  });
});

describe("another tenant", () => {
  test("continues neither a stored response of another tenant's nor a store: false one kept by its socket", async () => {
    const [mine, theirs] = [await open("owner"), await open("intruder")];
    f.llm.script({ text: "Stored." }, { text: "Kept." });
    const stored = (await mine.create({ model, input: "Secret one." })).at(-1) as unknown as {
      response: { id: string };
    };
    const kept = (await mine.create({ model, store: false, input: "Secret two." })).at(-1) as unknown as {
      response: { id: string };
    };
    for (const id of [stored.response.id, kept.response.id])
      for (const store of [true, false])
        expect(
          refusal(await theirs.create({ model, store, previous_response_id: id, input: "What did they say?" })),
        ).toMatchObject({ error: { code: "previous_response_not_found" } });
    expect(f.llm.requests).toHaveLength(2);
    expect((await f.loopd.services.store.conversations.list("intruder", { limit: 10 })).rows).toHaveLength(0);
    for (const ws of [mine, theirs]) ws.socket.close();
  });
});

describe("shutdown", () => {
  test("closes an open socket with 1001 (going away)", async () => {
    const ws = await open("acme");
    const closing = f.loopd.close();
    expect((await ws.closed).code).toBe(1001);
    await closing;
  });
});
