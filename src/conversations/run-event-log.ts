import type { Db } from "../store/db.js";
import type { NewRunEvent } from "../store/event-repository.js";
import type { Store } from "../store/store.js";
import type { Broadcast } from "../store/broadcast.js";
import type { RunSignals } from "./run-signals.js";

export interface RunEventLogOptions {
  store: Store;
  signals: RunSignals;
  broadcast: Broadcast;
  runId: string;
  /** The last event number already saved for this run. */
  lastSeq: number;
  /**
   * How long text deltas may wait to be written together. Each keeps its own
   * id; batching only saves round trips to the database.
   * @default 10
   */
  deltaFlushMs?: number;
}

/**
 * The one writer of a run's events. Numbers them 1, 2, 3 … and writes them in
 * that order, one transaction after the other, so a reader never sees event
 * n+1 before event n. Writes that must go with an event (a message, the run's
 * end) share its transaction through `commit`.
 */
export function createRunEventLog({ store, signals, broadcast, runId, lastSeq, deltaFlushMs = 10 }: RunEventLogOptions) {
  let seq = lastSeq;
  let pending: NewRunEvent[] = [];
  let timer: NodeJS.Timeout | null = null;
  let chain: Promise<unknown> = Promise.resolve();

  const next = (type: string, data: Record<string, unknown>): NewRunEvent => ({ seq: ++seq, type, data });

  /** Queues `work` after every earlier write; the pending events go first, in the same transaction. */
  function commit<T>(work: (tx: Db, event: typeof next) => Promise<T>): Promise<T> {
    if (timer) {
      clearTimeout(timer);
      timer = null;
    }
    const result = chain.then(() => {
      const batch = pending;
      pending = [];
      return store.transaction(async (tx) => {
        await store.events.append(tx, runId, batch);
        const events: NewRunEvent[] = [];
        const value = await work(tx, (type, data) => {
          const e = next(type, data);
          events.push(e);
          return e;
        });
        await store.events.append(tx, runId, events);
        await broadcast.send(tx, "loopd_run_events", runId);
        return value;
      });
    });
    chain = result.then(
      () => signals.notify(runId),
      () => signals.notify(runId),
    );
    return result;
  }

  return {
    /** An event with nothing else to save; text deltas are batched for a few milliseconds. */
    emit(type: string, data: Record<string, unknown>): void {
      pending.push(next(type, data));
      if (type !== "text.delta") {
        void commit(async () => undefined).catch(() => {});
      } else if (!timer) {
        timer = setTimeout(() => void commit(async () => undefined).catch(() => {}), deltaFlushMs);
      }
    },
    commit,
    /** Resolves when everything emitted so far is written (or has failed). */
    flush: () => commit(async () => undefined),
    get lastSeq() {
      return seq;
    },
  };
}

export type RunEventLog = ReturnType<typeof createRunEventLog>;
