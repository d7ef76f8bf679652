import { RunInterruption } from "../agent/run-interruption.js";
import type { NewRunEvent } from "../store/event-repository.js";
import type { Repositories, Store } from "../store/store.js";
import type { RunEventData, RunEventType } from "./run-events.js";
import type { RunSignals } from "./run-signals.js";

/** This process no longer owns the run (another took it over, or it ended): it must not write to it. */
export class LeaseLost extends RunInterruption {
  override readonly name = "LeaseLost";
}

export interface RunEventLogOptions {
  store: Store;
  signals: RunSignals;
  runId: string;
  /** The process that holds the run's lease; every write checks it still does. */
  owner: string;
  /** The last event number already saved for this run. */
  lastSeq: number;
  /**
   * How long text deltas may wait to be written together. Each keeps its own
   * id; batching only saves round trips to the database.
   * @default 10
   */
  deltaFlushMs?: number;
}

type EventInput = Pick<NewRunEvent, "type" | "data">;

/** Adds an event to the transaction under way. */
export type EmitInTransaction = <T extends RunEventType>(type: T, data: RunEventData<T>) => void;

/**
 * The one writer of a run's events. Writes happen one transaction after the
 * other, and events get their numbers (1, 2, 3 …) inside the transaction that
 * writes them, so a reader never sees event n+1 without event n, and a failed
 * write leaves no gap: its events are written again with the next one. Writes
 * that must go with an event (a message, the run's end) share its transaction
 * through `commit`, which also checks that this process still owns the run.
 */
export function createRunEventLog({ store, signals, runId, owner, lastSeq, deltaFlushMs = 10 }: RunEventLogOptions) {
  let seq = lastSeq;
  let pending: EventInput[] = [];
  let timer: NodeJS.Timeout | null = null;
  let chain: Promise<unknown> = Promise.resolve();

  /** Queues `work` after every earlier write; the pending events go first, in the same transaction. */
  function commit<T>(work: (tx: Repositories, event: EmitInTransaction) => Promise<T>): Promise<T> {
    if (timer) {
      clearTimeout(timer);
      timer = null;
    }
    const result = chain.then(() => {
      const batch = pending;
      pending = [];
      const before = seq;
      return store
        .transaction(async (tx) => {
          seq = before;
          if (!(await tx.runs.lockOwned(runId, owner))) throw new LeaseLost(`run ${runId} is no longer owned by this process`);
          const events: NewRunEvent[] = batch.map((e) => ({ seq: ++seq, ...e }));
          const value = await work(tx, (type, data) => void events.push({ seq: ++seq, type, data }));
          await tx.events.append(runId, events);
          await tx.notify("loopd_run_events", runId);
          return value;
        })
        .catch((err: unknown) => {
          seq = before;
          if (!(err instanceof LeaseLost)) pending = [...batch, ...pending];
          throw err;
        });
    });
    chain = result.then(
      () => signals.notify(runId),
      () => {},
    );
    return result;
  }

  const writeLater = () => void commit(async () => undefined).catch(() => {});

  return {
    /** An event with nothing else to save; text deltas are batched for a few milliseconds. */
    emit<T extends RunEventType>(type: T, data: RunEventData<T>): void {
      pending.push({ type, data });
      if (type !== "text.delta") writeLater();
      else timer ??= setTimeout(writeLater, deltaFlushMs);
    },
    commit,
    /** Resolves when everything emitted so far is written. */
    flush: () => commit(async () => undefined),
  };
}

