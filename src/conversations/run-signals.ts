import { EventEmitter } from "node:events";

/**
 * Wakes the readers of a run's events when new ones are committed. Only a
 * nudge: readers always read the events themselves from the database, so a
 * missed signal costs at most one poll interval, and a reader in another
 * process (which hears nothing from here) simply polls.
 */
export interface RunSignals {
  notify(runId: string): void;
  /** Resolves on the next signal for the run, after `timeoutMs`, or when `signal` aborts. */
  wait(runId: string, { timeoutMs, signal }: { timeoutMs: number; signal?: AbortSignal | undefined }): Promise<void>;
}

export function createRunSignals(): RunSignals {
  const emitter = new EventEmitter();
  emitter.setMaxListeners(0);
  return {
    notify: (runId) => {
      emitter.emit(runId);
    },
    wait: (runId, { timeoutMs, signal }) =>
      new Promise<void>((resolve) => {
        const done = () => {
          clearTimeout(timer);
          emitter.off(runId, done);
          signal?.removeEventListener("abort", done);
          resolve();
        };
        const timer = setTimeout(done, timeoutMs);
        emitter.once(runId, done);
        signal?.addEventListener("abort", done, { once: true });
      }),
  };
}
