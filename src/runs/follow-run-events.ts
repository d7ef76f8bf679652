import type { Services } from "../services.js";
import type { LoggedEvent } from "../store/event-repository.js";
import { isOverRun } from "../store/schema.js";
import { TERMINAL_EVENT_TYPES } from "./run-events.js";

export interface FollowOptions {
  runId: string;
  /** The run's conversation: its deletion ends the follow. */
  conversationId: string;
  /** The last event the reader has; it gets every later one. @default 0 */
  after?: number;
  /** Stops following (the client went away). */
  signal?: AbortSignal;
  /**
   * How soon to look again when no wake-up can be relied on (the database's
   * LISTEN connection is down); doubled while nothing comes, up to
   * `maxPollMs`, and back to this as soon as something does.
   * @default 250
   */
  pollMs?: number;
  /** @default 2000 */
  maxPollMs?: number;
  /**
   * How long to wait for a wake-up before looking anyway while wake-ups do
   * arrive: a safety net only, so idle readers cost the database nothing.
   * @default 30000
   */
  idleCheckMs?: number;
  /** @default 500 */
  batchSize?: number;
}

/** How a follow ended when it did not end with the run's terminal event. */
export type FollowEnd = { type: "run_gone" } | { type: "stopped" };

/**
 * A run's stored events from the database, in batches: every one after `after`, exactly
 * once, in order, then the live ones as they are committed, ending after the
 * terminal event. The reader pulls: a slow one holds at most one batch in
 * memory and never holds up the run, and one that falls behind catches up
 * from the database. Readers wait for a wake-up (every commit of a run in
 * this process, and, through LISTEN, of a run in another) and poll only
 * while wake-ups cannot be relied on. Returns `run_gone` when the run was
 * deleted (its conversation with it) before its end.
 */
export async function* followRunEvents(
  {
    store,
    signals,
    broadcast,
    exclusiveDatabase,
  }: Pick<Services, "store" | "signals" | "broadcast" | "exclusiveDatabase">,
  {
    runId,
    conversationId,
    after = 0,
    signal,
    pollMs = 250,
    maxPollMs = 2_000,
    idleCheckMs = 30_000,
    batchSize = 500,
  }: FollowOptions,
): AsyncGenerator<LoggedEvent[], FollowEnd> {
  let last = after;
  let ended = false;
  /** This reader read a pause as the run's last event: if nothing follows it, that is where its stream ends. */
  let readPause = false;
  let delay = pollMs;
  const wakeUps = signals.subscribe([runId, conversationId]);
  try {
    while (!signal?.aborted) {
      // What this process just wrote for the run, when it follows on from `last`: no read of the database.
      const rows =
        signals.publishedAfter(runId, last) ?? (await store.events.after({ runId, afterSeq: last, limit: batchSize }));
      // A pause ends the follow only as the last event there is: a run answered
      // since goes on, and a reader replaying it reads on past its pauses.
      const end = rows.findIndex(
        (row, i) =>
          TERMINAL_EVENT_TYPES.has(row.type) &&
          (row.type !== "run.requires_action" || (i === rows.length - 1 && rows.length < batchSize)),
      );
      if (end >= 0) {
        yield rows.slice(0, end + 1);
        return { type: "stopped" };
      }
      if (rows.length > 0) {
        yield rows;
        last = rows.at(-1)!.seq;
        readPause = rows.at(-1)!.type === "run.requires_action";
      }
      if (rows.length === batchSize) continue;
      // The terminal event is written with the run's end, so an ended run has
      // nothing more to send: a reader already past its end stops here.
      // (Its end and its deletion can both land between two reads: then it is gone.)
      if (ended) return (await store.runs.get(runId)) ? { type: "stopped" } : { type: "run_gone" };
      if (rows.length === 0) {
        const run = await store.runs.get(runId);
        if (!run) return { type: "run_gone" };
        if (run.status === "requires_action" && readPause) return { type: "stopped" };
        // A reader that came in after a pause waits for what comes of it (answer, expiry, cancel);
        // one of a run waiting out an outage, for its wake (the stream stays open).
        if (isOverRun(run)) {
          ended = true;
          continue; // one last read: the end may have been committed after ours
        }
      }
      // Every commit of this database reaches us when it is ours alone, or while LISTEN works.
      const wakeUpsFlow = exclusiveDatabase || broadcast.listening;
      // Without LISTEN for good (a transaction-mode pooler), never further apart than POLL_INTERVAL_MS.
      const slowest = Math.min(maxPollMs, broadcast.fallbackPollMs ?? maxPollMs);
      delay = rows.length > 0 ? Math.min(pollMs, slowest) : Math.min(delay * 2, slowest);
      await wakeUps.wait({ timeoutMs: wakeUpsFlow ? idleCheckMs : delay, signal });
    }
    return { type: "stopped" };
  } finally {
    wakeUps.close();
  }
}
