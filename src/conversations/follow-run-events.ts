import type { RunEventRow } from "../store/schema.js";
import { isActiveRun } from "../store/schema.js";
import { TERMINAL_EVENT_TYPES } from "./present.js";
import type { Services } from "./services.js";

export interface FollowOptions {
  runId: string;
  /** The last event the reader has; it gets every later one. @default 0 */
  after?: number;
  /** Stops following (the client went away). */
  signal?: AbortSignal;
  /**
   * How long to wait for a wake-up before looking again; what a reader in a
   * different process than the run relies on.
   * @default 250
   */
  pollMs?: number;
  /** @default 500 */
  batchSize?: number;
}

/**
 * A run's events from the database: every one after `after`, exactly once, in
 * order, then the live ones as they are committed, ending after the terminal
 * event. The reader pulls: a slow one holds at most one batch in memory and
 * never holds up the run, and one that falls behind catches up from the
 * database.
 */
export async function* followRunEvents(
  { store, signals }: Pick<Services, "store" | "signals">,
  { runId, after = 0, signal, pollMs = 250, batchSize = 500 }: FollowOptions,
): AsyncGenerator<RunEventRow> {
  let last = after;
  let ended = false;
  while (!signal?.aborted) {
    const rows = await store.events.after({ runId, afterSeq: last, limit: batchSize });
    for (const row of rows) {
      yield row;
      last = row.seq;
      if (TERMINAL_EVENT_TYPES.has(row.type)) return;
    }
    if (rows.length === batchSize) continue;
    // The terminal event is written with the run's end, so an ended run (or a
    // deleted one) has nothing more to send: a reader already past its end stops here.
    if (ended) return;
    if (rows.length === 0) {
      const run = await store.runs.get(runId);
      if (!run || !isActiveRun(run)) {
        ended = true;
        continue; // one last read: the end may have been committed after ours
      }
    }
    await signals.wait(runId, { timeoutMs: pollMs, signal });
  }
}
