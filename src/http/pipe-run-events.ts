import { followRunEvents } from "../runs/follow-run-events.js";
import type { Services } from "../services.js";
import type { RunRow } from "../store/schema.js";
import { linkedAbort } from "../util/linked-abort.js";
import { presentRunEvents, type PresentedEvent } from "./present-run-events.js";

export interface PipeRunOptions {
  run: RunRow;
  /** The last event the reader already has. */
  after: number;
  /** Aborts when the reader went away: nothing more is sent. */
  gone: AbortSignal;
  /** Aborts when the server shuts down: what was saved until then still goes out, then the pipe ends. */
  shutdown: AbortSignal;
  /** Hands one event to the reader; its promise holds the next one back (a slow reader's backpressure). */
  send: (event: PresentedEvent) => Promise<void>;
}

/**
 * Hands a run's events, as the contract presents them, to a reader (an SSE
 * stream, a WebSocket) until the run's terminal event, the reader's leaving
 * or the server's shutdown. A run deleted with its conversation while it was
 * read ends with a `conversation.deleted` event. A database that goes away
 * ends it quietly: the reader resumes from the last event it has.
 */
export async function pipeRunEvents(
  services: Pick<Services, "store" | "signals" | "broadcast" | "exclusiveDatabase">,
  { run, after, gone, shutdown, send }: PipeRunOptions,
): Promise<void> {
  const stop = linkedAbort(gone, shutdown);
  let last = after;
  const sendOne = async (event: PresentedEvent) => {
    last = event.seq;
    await send(event);
  };
  const sendAll = async (rows: Parameters<typeof presentRunEvents>[2]) => {
    for (const event of await presentRunEvents(services.store, run, rows)) {
      if (gone.aborted) return;
      await sendOne(event);
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
    for (; !next.done && !gone.aborted; next = await events.next()) await sendAll(next.value);
    if (next.done && next.value.type === "run_gone" && !gone.aborted) {
      // Deleted with its conversation while the client watched: say so, as the last event.
      await sendOne({
        seq: last + 1,
        type: "conversation.deleted",
        data: { conversation_id: run.conversationId, run_id: run.id },
      });
    }
    // Shutting down: what was saved before the runs stopped still goes out.
    if (shutdown.aborted && !gone.aborted) {
      await sendAll(await services.store.events.after({ runId: run.id, afterSeq: last, limit: 10_000 }));
    }
  } catch {
    // The database went away mid-stream: end it; the client resumes from its last event.
  } finally {
    await events.return({ type: "stopped" }).catch(() => {});
    stop.dispose();
  }
}
