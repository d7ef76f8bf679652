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
});
