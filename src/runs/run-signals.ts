import { EventEmitter } from "node:events";

/**
 * Wakes the readers of a run's events when new ones are committed (keyed by
 * the run's id), or when its conversation is deleted (keyed by the
 * conversation's). Only a nudge: readers always read the events themselves
 * from the database.
 */
export interface RunSignals {
  notify(key: string): void;
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
  return {
    notify: (key) => {
      emitter.emit(key);
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
