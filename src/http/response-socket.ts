import { randomBytes } from "node:crypto";
import type { FastifyBaseLogger } from "fastify";
import type { RawData, WebSocket } from "ws";
import { AppError } from "../errors.js";
import { createResponse, type CreatedResponse } from "../openai-api/responses/create-response.js";
import type { CreateResponseBody } from "../openai-api/responses/create-response-body.js";
import { createKeptResponses } from "../openai-api/responses/kept-responses.js";
import { responseEncoderOf } from "../openai-api/responses/response-stream.js";
import type { HttpDeps } from "./http-deps.js";
import { pipeRunEvents } from "./pipe-run-events.js";
import { bad, createOf, errorEventOf, lifeSpent } from "./response-socket-messages.js";

/**
 * A socket that starts no response this long (since it opened or its last
 * response ended) is closed; a message refused does not count, so a client
 * cannot hold a socket by sending bad ones.
 */
export const RESPONSE_SOCKET_IDLE_MS = 10 * 60_000;

/**
 * A socket's whole life, as OpenAI's (60 minutes): past it the socket takes
 * no new response; once the one running (if any) has ended it gets an error
 * event `websocket_connection_limit_reached` and is closed (1000), so a
 * client holds neither its stream share nor its kept responses for good. The
 * client opens a new socket and goes on (`previous_response_id` of a stored
 * response). A response still running the idle time after that (its events
 * unread, say) does not hold the socket: it is dropped.
 */
export const RESPONSE_SOCKET_MAX_LIFE_MS = 60 * 60_000;

/**
 * The most error events a socket may have waiting to be written: past it a
 * message closes the socket (1008), so a client flooding it with messages
 * whose answers it never reads holds no more than these in the server.
 */
export const MAX_UNREAD_ERRORS = 64;

export interface ResponseSocketOptions {
  tenant: string;
  log: FastifyBaseLogger;
  /** @default RESPONSE_SOCKET_IDLE_MS */
  idleMs?: number | undefined;
  /** @default RESPONSE_SOCKET_MAX_LIFE_MS */
  lifeMs?: number | undefined;
  /** Counts a `response.create` in the key's rate limit: the refusal past it, or null. */
  checkRate?: (() => Promise<AppError | null>) | undefined;
}

/**
 * One WebSocket of `/v1/responses` (OpenAI's WebSocket mode): each
 * `response.create` message (a create body with `"type"`; the response
 * streams, so `stream` is ignored and `background` refused) runs a response
 * as `POST /v1/responses` does, and its events go out as the SSE stream's,
 * one message each. One response at a time: a `response.create` while one
 * runs is refused with an error event, and not started. `store: false`
 * responses are kept for the socket's life (`kept-responses.ts`). Errors are
 * `{"type": "error", "status", "error": {type, code, message, param}}`; a
 * message that is not JSON, or of another type, gets one too, and the socket
 * stays open. The client closing the socket leaves a stored response's run
 * going (as a dropped SSE stream does; read it back with `GET
 * /v1/responses/:id`), while a `store: false` one is stopped with its
 * conversation. Idle sockets are closed, and every socket at the end of its
 * life; a peer that stops answering pings is dropped; at shutdown each
 * socket sends what was saved, then closes (1001).
 */
export function serveResponseSocket(
  deps: HttpDeps,
  socket: WebSocket,
  {
    tenant,
    log,
    idleMs = RESPONSE_SOCKET_IDLE_MS,
    lifeMs = RESPONSE_SOCKET_MAX_LIFE_MS,
    checkRate,
  }: ResponseSocketOptions,
): void {
  const { services } = deps;
  const kept = createKeptResponses(deps, { tenant });
  const gone = new AbortController();
  /** The response running now, if any: one at a time. */
  let current: object | null = null;

  const send = (text: string) =>
    new Promise<void>((resolve) => {
      if (socket.readyState !== socket.OPEN) resolve();
      // Resolved once written: a slow client holds the next event back, as an SSE stream's drain does.
      else socket.send(text, () => resolve());
    });
  /** Error events not written yet: a client that sends on and reads none piles them up. */
  let unread = 0;
  const sendError = (err: unknown) => {
    unread++;
    return send(JSON.stringify(errorEventOf(err, log))).finally(() => unread--);
  };

  let idle: NodeJS.Timeout | undefined;
  const armIdle = () => {
    clearTimeout(idle);
    idle = setTimeout(() => socket.close(1000, "idle"), idleMs);
  };
  // A peer that answers no ping in a whole interval is gone without a close: drop it. Not on a
  // tick that comes late (the event loop stalled): the pong may be read only after it runs.
  const pingMs = deps.ssePingMs ?? 15_000;
  // Only the pong of the last ping counts (it carries the ping's bytes): unasked ones prove nothing.
  let alive = true;
  let asked = Buffer.alloc(0);
  let lastTick = performance.now();
  socket.on("pong", (data: Buffer) => {
    if (data.equals(asked)) alive = true;
  });
  const ping = setInterval(() => {
    const now = performance.now();
    const late = now - lastTick > pingMs * 1.5;
    lastTick = now;
    if (!alive) return late ? undefined : socket.terminate();
    alive = false;
    asked = randomBytes(8);
    socket.ping(asked);
  }, pingMs);
  const closeForShutdown = () => {
    if (!current) socket.close(1001, "the server is shutting down");
  };
  deps.shutdown.addEventListener("abort", closeForShutdown, { once: true });
  let spent = false;
  /** The error event, then the close frame after it (ws drops a peer that does not answer it within 30 s). */
  const closeForLife = () => {
    if (current || socket.readyState !== socket.OPEN) return;
    void sendError(lifeSpent(lifeMs));
    socket.close(1000, "connection limit reached");
  };
  let overdue: NodeJS.Timeout | undefined;
  const life = setTimeout(() => {
    spent = true;
    closeForLife();
    overdue = setTimeout(() => socket.terminate(), idleMs);
  }, lifeMs);
  armIdle();

  /**
   * Runs one response and streams its events. What it leaves kept or evicted
   * is settled, and the socket freed for the next response (`done`), before
   * its last message goes out: a client answering that at once is not refused.
   */
  const respond = async (body: CreateResponseBody, done: () => void) => {
    const refused = await checkRate?.();
    if (refused) {
      done();
      return sendError(refused);
    }
    const taking = services.intake.begin();
    let created: CreatedResponse;
    try {
      created = await createResponse(deps, { tenant, body, kept });
    } catch (err) {
      await kept.evict(body.previous_response_id);
      done();
      return sendError(err);
    } finally {
      taking();
    }
    await kept.hold(created);
    const settle = async (ended: string) => {
      if (ended === "response.failed" || ended === "error") {
        await kept.evict(body.previous_response_id);
        await kept.discard(created);
      } else await kept.keep(created);
      done();
    };
    const sendFrames = async (text: string) => {
      for (const { event, data } of sseFrames(text)) {
        if (TERMINAL.has(event)) await settle(event);
        await send(data);
      }
    };
    const encoder = await responseEncoderOf(services, { record: created, run: created.run });
    await sendFrames(encoder.open());
    await pipeRunEvents(services, {
      run: created.run,
      after: created.afterEvent,
      gone: gone.signal,
      shutdown: deps.shutdown,
      send: (event) => sendFrames(encoder.encode(event)),
    });
  };

  socket.on("message", (data: RawData, isBinary: boolean) => {
    // Closing: what is still read is answered no more.
    if (socket.readyState !== socket.OPEN) return;
    if (unread >= MAX_UNREAD_ERRORS)
      return socket.close(1008, "too many error events unread: read the socket's messages as you send");
    let body: CreateResponseBody;
    try {
      body = createOf(data, isBinary);
    } catch (err) {
      void sendError(err);
      return;
    }
    if (current) {
      void sendError(
        bad("a response is already in progress on this socket: send the next response.create after its last event"),
      );
      return;
    }
    if (deps.shutdown.aborted) {
      void sendError(new AppError("unavailable", "the server is shutting down; try again shortly"));
      return;
    }
    if (spent) {
      void sendError(lifeSpent(lifeMs));
      return;
    }
    const token = {};
    current = token;
    clearTimeout(idle);
    const done = () => {
      if (current !== token) return;
      current = null;
      if (deps.shutdown.aborted) closeForShutdown();
      else if (!spent) armIdle();
    };
    respond(body, done)
      .catch((err: unknown) => {
        done();
        return sendError(err);
      })
      .finally(() => {
        done();
        // Its life spent meanwhile: closed once the response's last event is out.
        if (spent) closeForLife();
      });
  });

  socket.once("close", () => {
    gone.abort();
    clearTimeout(idle);
    clearInterval(ping);
    clearTimeout(life);
    clearTimeout(overdue);
    deps.shutdown.removeEventListener("abort", closeForShutdown);
    void kept.close();
  });
}

const TERMINAL = new Set(["response.completed", "response.incomplete", "response.failed", "error"]);

/** The SSE frames of the response encoder, as (event, data): a WebSocket message is a frame's `data`, the event's JSON. */
function sseFrames(text: string): { event: string; data: string }[] {
  return text
    .split("\n\n")
    .filter((frame) => frame !== "")
    .map((frame) => {
      const [eventLine = "", dataLine = ""] = frame.split("\n");
      return { event: eventLine.slice("event: ".length), data: dataLine.slice("data: ".length) };
    });
}
