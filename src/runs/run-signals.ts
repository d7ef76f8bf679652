import { EventEmitter } from "node:events";
import type { LoggedEvent } from "../store/event-repository.js";
import type { Database } from "../store/db.js";
import { isNextEvent } from "./run-numbering.js";

/**
 * Wakes the readers of a run's events when new ones are committed (keyed by
 * the run's id), or when its conversation is deleted (keyed by the
 * conversation's). A run written in this process also hands over what it
 * just committed, exactly as the database holds it: a reader that is up to
 * date takes it from there instead of reading the database; any other
 * reads the database.
 */
export interface RunSignals {
  notify(key: string): void;
  /** The events a write of this process just committed for the run (numbered on, in order), then a nudge. */
  publish(runId: string, conversationId: string, rows: LoggedEvent[]): void;
  /** The run's events after `afterSeq` from its last published write, when that write covers the next one; null: read the database. */
  publishedAfter(runId: string, afterSeq: number): LoggedEvent[] | null;
  /** The run's writer is done here: its last write is no longer kept (only `rows`, when given: not a later writer's). */
  forget(runId: string, rows?: LoggedEvent[]): void;
  /** The conversation is deleted: no write of its runs is handed out any more. */
  forgetConversation(conversationId: string): void;
  /**
   * Listens for signals on these keys from now on. Subscribe before reading
   * the database: a signal that arrives between the read and the wait is
   * kept, so the wait returns at once instead of missing it.
   */
  subscribe(keys: string | string[]): RunSubscription;
}

export interface RunSubscription {
  /** Resolves on the next signal (or at once if one came since the last wait), after `timeoutMs`, or when `signal` aborts. */
  wait({ timeoutMs, signal }: { timeoutMs: number; signal?: AbortSignal | undefined }): Promise<void>;
  close(): void;
}

export function createRunSignals(): RunSignals {
  const emitter = new EventEmitter();
  emitter.setMaxListeners(0);
  // One write per run executing here: bounded by the runs, dropped with them.
  const published = new Map<string, { conversationId: string; rows: LoggedEvent[] }>();
  return {
    notify: (key) => {
      emitter.emit(key);
    },
    publish(runId, conversationId, rows) {
      if (rows.length > 0) published.set(runId, { conversationId, rows });
      emitter.emit(runId);
    },
    publishedAfter(runId, afterSeq) {
      const rows = published.get(runId)?.rows ?? [];
      const from = rows.findIndex((row) => row.seq > afterSeq);
      // Only a write that holds the very next event: one that starts later leaves a gap the database fills.
      if (from < 0 || (from === 0 && !isNextEvent(afterSeq, rows[0]!.seq))) return null;
      return rows.slice(from);
    },
    forget(runId, rows) {
      if (!rows || published.get(runId)?.rows === rows) published.delete(runId);
    },
    forgetConversation(conversationId) {
      for (const [runId, entry] of published) if (entry.conversationId === conversationId) published.delete(runId);
    },
    subscribe(keys) {
      const all = typeof keys === "string" ? [keys] : keys;
      let pending = false;
      let wake: (() => void) | null = null;
      const onSignal = () => {
        pending = true;
        wake?.();
      };
      for (const key of all) emitter.on(key, onSignal);
      return {
        wait: ({ timeoutMs, signal }) =>
          new Promise<void>((resolve) => {
            if (pending || signal?.aborted) {
              pending = false;
              return resolve();
            }
            const timer = setTimeout(() => done(), timeoutMs);
            const done = () => {
              clearTimeout(timer);
              signal?.removeEventListener("abort", done);
              wake = null;
              pending = false;
              resolve();
            };
            wake = done;
            signal?.addEventListener("abort", done, { once: true });
          }),
        close: () => {
          for (const key of all) emitter.off(key, onSignal);
          wake?.();
        },
      };
    },
  };
}

/**
 * Commit signals belong to the database, not to the app: two apps on one
 * embedded database (one process) must hear each other's commits, as they
 * cannot through LISTEN.
 */
const signalsByDatabase = new WeakMap<Database, RunSignals>();
export function signalsOf(database: Database): RunSignals {
  let signals = signalsByDatabase.get(database);
  if (!signals) signalsByDatabase.set(database, (signals = createRunSignals()));
  return signals;
}
