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

/**
 * A loopd whose sockets live 1 s (and get the idle time, 1 s, for a response
 * running then), for peers that do not read what they asked for; the
 * tenant's one stream share tells whether their socket is gone.
 */
function useSlowPeers(pingMs: number) {
  const f = useLoopd({
    listen: true,
    responseSocketLifeMs: 1_000,
    responseSocketIdleMs: 1_000,
    ssePingMs: pingMs,
    env: { MAX_STREAMS_PER_TENANT: "1" },
  });
  const url = () => `${f.loopd.url.replace(/^http/, "ws")}/v1/responses`;
  /** Whether a new socket gets the tenant's one stream share now. */
  const shareFree = () =>
    new Promise<boolean>((resolve) => {
      const probe = new WebSocket(url());
      probe.once("open", () => {
        probe.once("close", () => resolve(true));
        probe.close();
      });
      probe.once("unexpected-response", () => resolve(false));
      probe.once("error", () => resolve(false));
    });
  return {
    f,
    base: () => f.loopd.url,
    /** A socket whose peer has asked for an answer too big to read at its pace; `trickle` runs every 50 ms. */
    async reader(
      trickle: (ws: WebSocket, socket: { pause(): void; resume(): void }) => void,
      { autoPong }: { autoPong: boolean },
    ) {
      const ws = new WebSocket(url(), { autoPong });
      await new Promise<void>((resolve, reject) => ws.once("open", resolve).once("error", reject));
      f.llm.script({ text: `${"a".repeat(1_500_000)} ${"b".repeat(1_500_000)}` });
      const socket = (ws as unknown as { _socket: { pause(): void; resume(): void } })._socket;
      socket.pause();
      ws.send(JSON.stringify({ type: "response.create", model, input: "Say a lot" }));
      const timer = setInterval(() => trickle(ws, socket), 50);
      return () => (clearInterval(timer), ws.terminate());
    },
    /** Polled until the share is back (the socket gone), for at most 10 s. */
    async shareComesBack(): Promise<boolean> {
      for (let i = 0; i < 100; i++) {
        if (await shareFree()) return true;
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
      return false;
    },
  };
}

describe("a peer that reads nothing and sends pongs nobody asked for", () => {
  const peers = useSlowPeers(200);

  test("is dropped: only the pong of the server's ping counts (found by review)", async () => {
    const stop = await peers.reader((ws) => ws.pong(), { autoPong: false });
    try {
      expect(await peers.shareComesBack()).toBe(true);
    } finally {
      stop();
    }
  });
});

describe("a response still running the idle time after the socket's life", () => {
  // Pings too far apart to matter here: the life decides.
  const peers = useSlowPeers(60_000);

  test("does not hold the socket: it is dropped then (found by review)", async () => {
    // A peer that reads all it is sent, and a response that streams for 12 s (store: false: it stops with its socket).
    const ws = await openResponseSocket(peers.base());
    peers.f.llm.script({ text: Array.from({ length: 40 }, (_, i) => `w${i}`).join(" "), chunkDelayMs: 300 });
    ws.send(JSON.stringify({ type: "response.create", model, input: "Go slowly", store: false }));
    expect(await ws.next()).toMatchObject({ type: "response.created" });
    expect(await peers.shareComesBack()).toBe(true);
    expect(await ws.closed).toMatchObject({ code: 1006 });
  });
});
