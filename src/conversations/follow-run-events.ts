import type { RunEventRow } from "../store/schema.js";
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
  let idle = 0;
  while (!signal?.aborted) {
    const rows = await store.events.after({ runId, afterSeq: last, limit: batchSize });
    for (const row of rows) {
      yield row;
      last = row.seq;
      if (TERMINAL_EVENT_TYPES.has(row.type)) return;
    }
    if (rows.length === batchSize) continue;
    if (rows.length === 0 && ++idle % 20 === 0 && !(await store.runs.get(runId))) return; // deleted meanwhile
    if (rows.length > 0) idle = 0;
    await signals.wait(runId, { timeoutMs: pollMs, signal });
  }
}
