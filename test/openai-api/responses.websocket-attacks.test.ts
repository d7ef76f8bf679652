/**
 * WebSocket mode of `/v1/responses` against what a web page or a hostile
 * client may try with keys off: a foreign page's upgrade, a rebound DNS
 * name, and a client that floods the socket with messages it never reads
 * the answers to.
 */
import WebSocket from "ws";
import { describe, expect, test } from "vitest";
import { useLoopd } from "../support/helpers/use-loopd.js";
import { openResponseSocket, refusedUpgrade } from "../support/helpers/response-socket.js";
import { MAX_UNREAD_ERRORS } from "../../src/http/response-socket.js";

const f = useLoopd({ listen: true, env: { API_KEYS_REQUIRED: "false", MOCK_PROVIDER: "true" } });

describe("the upgrade with keys off", () => {
  test("from a foreign page (Origin): 403, no socket", async () => {
    expect(await refusedUpgrade(f.loopd.url, { origin: "https://evil.example" })).toBe(403);
  });

  test("by a rebound DNS name (Host): 421, no socket", async () => {
    expect(await refusedUpgrade(f.loopd.url, { host: "evil.example" })).toBe(421);
  });

  test("from loopd's own page: the socket opens", async () => {
    const ws = await openResponseSocket(f.loopd.url);
    ws.socket.close();
    expect((await ws.closed).code).toBe(1005);
  });
});

describe("a client that sends and never reads", () => {
  test("past MAX_UNREAD_ERRORS error events unread, the socket is closed (1008): what the server holds for it is bounded", async () => {
    const socket = new WebSocket(`${f.loopd.url.replace(/^http/, "ws")}/v1/responses`);
    await new Promise((resolve, reject) => socket.once("open", resolve).once("error", reject));
    // Reads nothing while it sends: the server's answers pile up (the kernel's buffers first).
    socket.pause();
    const sent = 100_000;
    for (let i = 0; i < sent; i++) socket.send("x");
    let errors = 0;
    socket.on("message", () => errors++);
    // Closed, or (with nothing to stop it) every message answered.
    const closed = new Promise<number | "all answered">((resolve) => {
      socket.once("close", (code) => resolve(code));
      socket.on("message", () => errors === sent && resolve("all answered"));
    });
    socket.resume();
    expect(await closed).toBe(1008);
    expect(errors).toBeGreaterThanOrEqual(MAX_UNREAD_ERRORS);
    expect(errors).toBeLessThan(sent);
  });
});

describe("a provider that fails mid-stream", () => {
  test("store: false: response.failed, its conversation deleted, and the socket takes the next response", async () => {
    const ws = await openResponseSocket(f.loopd.url);
    const before = await f.loopd.services.store.conversations.list("default", { limit: 100 });
    f.llm.script({
      text: "one two three four five",
      errorAfterChunks: 2,
      streamError: { type: "invalid_request_error", message: "bad" },
    });
    const failed = await ws.create({ model: "openai/gpt-4o-mini", store: false, input: "Hi" });
    expect(failed.at(-1)?.type).toBe("response.failed");
    expect(await f.loopd.services.store.conversations.list("default", { limit: 100 })).toEqual(before);
    f.llm.script({ text: "Fine now." });
    const next = await ws.create({ model: "openai/gpt-4o-mini", store: false, input: "Again?" });
    expect(next.at(-1)?.type).toBe("response.completed");
    // Kept by the socket (so the list above is the tenant's own).
    const after = await f.loopd.services.store.conversations.list("default", { limit: 100 });
    expect(after.rows).toHaveLength(before.rows.length + 1);
    ws.socket.close();
    await ws.closed;
  });
});

describe("a message nested deeply", () => {
  test("deeper than a request body may be: a 400 error event naming the field (not a stack overflow's 500), and the socket goes on", async () => {
    const ws = await openResponseSocket(f.loopd.url);
    const deep = "[".repeat(100_000) + "]".repeat(100_000);
    const tools = [{ type: "function", name: "f", parameters: { type: "object", x: "DEEP" } }];
    const message = JSON.stringify({ type: "response.create", model: "openai/gpt-4o-mini", input: "Hi", tools });
    ws.send(message.replace('"DEEP"', deep));
    const [refused] = await ws.turn();
    expect(refused).toMatchObject({ type: "error", status: 400, error: { param: "tools" } });
    expect(JSON.stringify(refused)).toContain("nested deeper than the 64 levels");
    expect(f.llm.requests).toHaveLength(0);
    f.llm.script({ text: "Fine." });
    expect((await ws.create({ model: "openai/gpt-4o-mini", store: false, input: "Hi" })).at(-1)?.type).toBe(
      "response.completed",
    );
    ws.socket.close();
    await ws.closed;
  });
});
