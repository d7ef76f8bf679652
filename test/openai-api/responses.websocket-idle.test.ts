/**
 * WebSocket mode of `/v1/responses` and the sockets nobody uses: one that
 * starts no response for the idle time is closed (1000, "idle") — whether it
 * sends nothing or only messages that are refused — and a peer that stops
 * answering pings is dropped (the idle sockets here answer them: their ping
 * is the default 15 s).
 */
import WebSocket from "ws";
import { describe, expect, test } from "vitest";
import { useLoopd } from "../support/helpers/use-loopd.js";
import { openResponseSocket } from "../support/helpers/response-socket.js";

const IDLE_MS = 1_500;
const model = "openai/gpt-4o-mini";

describe("idle", () => {
  const f = useLoopd({ listen: true, responseSocketIdleMs: IDLE_MS });

  test("a socket that sends nothing is closed with 1000 idle; one that answered a response too, after it", async () => {
    const silent = await openResponseSocket(f.loopd.url);
    expect(await silent.closed).toEqual({ code: 1000, reason: "idle" });

    const used = await openResponseSocket(f.loopd.url);
    f.llm.script({ text: "Hi." });
    const turn = await used.create({ model, input: "Say hi" });
    expect(turn.at(-1)?.type).toBe("response.completed");
    expect(await used.closed).toEqual({ code: 1000, reason: "idle" });
  });

  test("refused messages do not keep a socket open: sent one after another's answer, it still closes when idle", async () => {
    const ws = await openResponseSocket(f.loopd.url);
    let refusals = 0;
    const flood = (async () => {
      // Each bad message as soon as the last one's error event has come: the socket is never quiet.
      for (;;) {
        ws.send("{not json");
        const answer = await ws.next().catch(() => null);
        if (!answer) return;
        expect(answer).toMatchObject({ type: "error", status: 400 });
        refusals++;
      }
    })();
    expect(await ws.closed).toEqual({ code: 1000, reason: "idle" });
    await flood;
    expect(refusals).toBeGreaterThan(0);
  });
});

describe("pings", () => {
  const f = useLoopd({ listen: true, ssePingMs: 300 });

  test("a peer that answers no ping is dropped: the connection ended, with no close frame", async () => {
    const mute = new WebSocket(`${f.loopd.url.replace(/^http/, "ws")}/v1/responses`, { autoPong: false });
    let pings = 0;
    mute.on("ping", () => pings++);
    const dropped = new Promise<number>((resolve) => mute.once("close", (code) => resolve(code)));
    expect(await dropped).toBe(1006);
    expect(pings).toBeGreaterThan(0);
  });

  test("a peer whose pong the server reads late, after its own event loop stalled, is not dropped", async () => {
    const peer = new WebSocket(`${f.loopd.url.replace(/^http/, "ws")}/v1/responses`);
    const closed = new Promise<"closed">((resolve) => peer.once("close", () => resolve("closed")));
    // The pong goes out as the ping comes (ws answers before it tells); then this process (the server's too) stalls
    // for three ping intervals, so the server's next tick runs before it has read that pong.
    await new Promise<void>((resolve) =>
      peer.once("ping", () => {
        const until = performance.now() + 1_000;
        while (performance.now() < until);
        resolve();
      }),
    );
    const answered = new Promise<"pong">((resolve) => peer.once("pong", () => resolve("pong")));
    peer.ping();
    expect(await Promise.race([answered, closed])).toBe("pong");
    // And it is kept on: a later ping is still answered.
    const again = new Promise<"pong">((resolve) => peer.once("pong", () => resolve("pong")));
    await new Promise<void>((resolve) => peer.once("ping", () => resolve()));
    peer.ping();
    expect(await Promise.race([again, closed])).toBe("pong");
    peer.close();
  });
});

describe("life", () => {
  const LIFE_MS = 1_500;
  const f = useLoopd({ listen: true, responseSocketLifeMs: LIFE_MS });
  const limitEvent = {
    type: "error",
    status: 400,
    error: { type: "invalid_request_error", code: "websocket_connection_limit_reached" },
  };

  test("a socket at the end of its life gets websocket_connection_limit_reached, then is closed", async () => {
    const ws = await openResponseSocket(f.loopd.url);
    expect(await ws.next()).toMatchObject(limitEvent);
    expect(await ws.closed).toEqual({ code: 1000, reason: "connection limit reached" });
  });

  test("a response running when the life ends finishes first, then the socket gets the error and is closed", async () => {
    const ws = await openResponseSocket(f.loopd.url);
    // Streamed over about twice the socket's life.
    f.llm.script({ text: "one two three four five six seven eight nine ten", chunkDelayMs: 300 });
    const started = Date.now();
    const turn = await ws.create({ model, input: "Count" });
    expect(Date.now() - started).toBeGreaterThan(LIFE_MS);
    expect(turn.at(-1)).toMatchObject({ type: "response.completed" });
    expect(await ws.next()).toMatchObject(limitEvent);
    expect(await ws.closed).toEqual({ code: 1000, reason: "connection limit reached" });
  });
});
