import { once } from "node:events";
import type { FastifyReply } from "fastify";
import { followRunEvents } from "../runs/follow-run-events.js";
import type { Services } from "../services.js";
import type { RunRow } from "../store/schema.js";
import { linkedAbort } from "../util/linked-abort.js";
import { presentRunEvents, type PresentedEvent } from "./present-run-events.js";

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
export async function streamRunEvents(
  services: Pick<Services, "store" | "signals" | "broadcast" | "exclusiveDatabase">,
  reply: FastifyReply,
  { run, after, shutdown, pingMs = 15_000, release = () => {}, encoder = loopdEvents }: StreamRunOptions,
): Promise<void> {
  // Those the route set (x-loopd-run-id …) go out with the stream's own.
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
    ...encoder.headers,
  });
  if (encoder.open) res.write(encoder.open());
  res.flushHeaders();
  const gone = new AbortController();
  res.once("close", () => gone.abort());
  const stop = linkedAbort(gone.signal, shutdown);
  const ping = setInterval(() => res.write(": ping\n\n"), pingMs);
  let last = after;

  const send = async (event: PresentedEvent) => {
    last = event.seq;
    const text = encoder.encode(event);
    // A slow client: wait for its socket to drain (or close) before reading on.
    if (text !== "" && !res.write(text)) await once(res, "drain", { signal: gone.signal }).catch(() => {});
  };
  const sendAll = async (rows: Parameters<typeof presentRunEvents>[2]) => {
    for (const event of await presentRunEvents(services.store, run, rows)) {
      if (gone.signal.aborted) return;
      await send(event);
    }
  };
  const events = followRunEvents(services, {
    runId: run.id,
    conversationId: run.conversationId,
    after,
    signal: stop.signal,
  });
  try {
    let next = await events.next();
    for (; !next.done && !gone.signal.aborted; next = await events.next()) await sendAll(next.value);
    if (next.done && next.value.type === "run_gone" && !gone.signal.aborted) {
      // Deleted with its conversation while the client watched: say so, as the last event.
      await send({
        seq: last + 1,
        type: "conversation.deleted",
        data: { conversation_id: run.conversationId, run_id: run.id },
      });
    }
    // Shutting down: what was saved before the runs stopped still goes out.
    if (shutdown.aborted && !gone.signal.aborted) {
      await sendAll(await services.store.events.after({ runId: run.id, afterSeq: last, limit: 10_000 }));
    }
  } catch {
    // The database went away mid-stream: end it; the client resumes with Last-Event-ID.
  } finally {
    await events.return({ type: "stopped" }).catch(() => {});
    clearInterval(ping);
    stop.dispose();
    res.end();
    release();
  }
}
