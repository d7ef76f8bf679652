import { once } from "node:events";
import type { FastifyReply } from "fastify";
import type { Services } from "../services.js";
import type { RunRow } from "../store/schema.js";
import { pipeRunEvents } from "./pipe-run-events.js";
import type { PresentedEvent } from "./present-run-events.js";

export interface StreamRunOptions {
  run: RunRow;
  /** The last event the client already has. */
  after: number;
  /** Aborts when the server shuts down: the stream then ends with the events so far. */
  shutdown: AbortSignal;
  /** @default 15000 */
  pingMs?: number;
  /** Called once the stream has ended (its place in the stream gate). */
  release?: () => void;
  /** How events are written: @default loopd's own SSE events */
  encoder?: EventEncoder;
}

/** How a stream writes a run's events: loopd's SSE events, or another protocol's frames (the AI SDK's UI chunks). */
export interface EventEncoder {
  /** Headers beside the SSE ones. */
  headers?: Record<string, string>;
  /** Written before the first event. */
  open?: () => string;
  /** The text of one event; "" writes nothing. */
  encode: (event: PresentedEvent) => string;
}

export const formatEvent = (row: PresentedEvent) =>
  `id: ${row.seq}\nevent: ${row.type}\ndata: ${JSON.stringify(row.data)}\n\n`;

const loopdEvents: EventEncoder = { encode: formatEvent };

/**
 * Sends a run's events as Server-Sent Events until its terminal event. The
 * socket's backpressure is respected: while the client is slow we stop
 * reading, and the events wait in the database, not in memory.
 */
/**
 * Takes the response from fastify and writes an event stream's head: the
 * headers the route set (x-loopd-run-id …) with the stream's own, and `extra`.
 */
export function openEventStream(reply: FastifyReply, extra?: Record<string, string>) {
  const headers = Object.fromEntries(
    Object.entries(reply.getHeaders()).filter((e): e is [string, string | number | string[]] => e[1] !== undefined),
  );
  reply.hijack();
  const res = reply.raw;
  res.writeHead(200, {
    ...headers,
    "content-type": "text/event-stream; charset=utf-8",
    "cache-control": "no-cache, no-transform",
    connection: "keep-alive",
    "x-accel-buffering": "no",
    ...extra,
  });
  return res;
}

export async function streamRunEvents(
  services: Pick<Services, "store" | "signals" | "broadcast" | "exclusiveDatabase">,
  reply: FastifyReply,
  { run, after, shutdown, pingMs = 15_000, release = () => {}, encoder = loopdEvents }: StreamRunOptions,
): Promise<void> {
  const res = openEventStream(reply, encoder.headers);
  if (encoder.open) res.write(encoder.open());
  res.flushHeaders();
  const gone = new AbortController();
  res.once("close", () => gone.abort());
  const ping = setInterval(() => res.write(": ping\n\n"), pingMs);
  try {
    await pipeRunEvents(services, {
      run,
      after,
      gone: gone.signal,
      shutdown,
      send: async (event) => {
        const text = encoder.encode(event);
        // A slow client: wait for its socket to drain (or close) before reading on.
        if (text !== "" && !res.write(text)) await once(res, "drain", { signal: gone.signal }).catch(() => {});
      },
    });
  } finally {
    clearInterval(ping);
    res.end();
    release();
  }
}
