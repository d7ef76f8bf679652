import { once } from "node:events";
import type { FastifyReply } from "fastify";
import { followRunEvents } from "../conversations/follow-run-events.js";
import type { Services } from "../conversations/services.js";
import type { RunEventRow } from "../store/schema.js";
import { linkedAbort } from "../linked-abort.js";

export interface StreamRunOptions {
  runId: string;
  /** The last event the client already has. */
  after: number;
  /** Aborts when the server shuts down: the stream then ends with the events so far. */
  shutdown: AbortSignal;
  /** @default 15000 */
  pingMs?: number;
}

export const formatEvent = (row: Pick<RunEventRow, "seq" | "type" | "data">) =>
  `id: ${row.seq}\nevent: ${row.type}\ndata: ${JSON.stringify(row.data)}\n\n`;

/**
 * Sends a run's events as Server-Sent Events until its terminal event. The
 * socket's backpressure is respected: while the client is slow we stop
 * reading, and the events wait in the database, not in memory.
 */
export async function streamRunEvents(
  services: Pick<Services, "store" | "signals">,
  reply: FastifyReply,
  { runId, after, shutdown, pingMs = 15_000 }: StreamRunOptions,
): Promise<void> {
  // Those the route set (x-loopd-run-id …) go out with the stream's own.
  const headers = Object.fromEntries(Object.entries(reply.getHeaders()).filter((e): e is [string, string | number | string[]] => e[1] !== undefined));
  reply.hijack();
  const res = reply.raw;
  res.writeHead(200, {
    ...headers,
    "content-type": "text/event-stream; charset=utf-8",
    "cache-control": "no-cache, no-transform",
    connection: "keep-alive",
    "x-accel-buffering": "no",
  });
  res.flushHeaders();
  const gone = new AbortController();
  res.once("close", () => gone.abort());
  const stop = linkedAbort(gone.signal, shutdown);
  const ping = setInterval(() => res.write(": ping\n\n"), pingMs);
  let last = after;

  const send = async (row: RunEventRow) => {
    last = row.seq;
    // A slow client: wait for its socket to drain (or close) before reading on.
    if (!res.write(formatEvent(row))) await once(res, "drain", { signal: gone.signal }).catch(() => {});
  };
  try {
    for await (const row of followRunEvents(services, { runId, after, signal: stop.signal })) {
      if (gone.signal.aborted) break;
      await send(row);
    }
    // Shutting down: what was saved before the runs stopped still goes out.
    if (shutdown.aborted && !gone.signal.aborted) {
      for (const row of await services.store.events.after({ runId, afterSeq: last, limit: 10_000 })) await send(row);
    }
  } catch {
    // The database went away mid-stream: end it; the client resumes with Last-Event-ID.
  } finally {
    clearInterval(ping);
    stop.dispose();
    res.end();
  }
}
