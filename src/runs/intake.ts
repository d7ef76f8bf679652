/**
 * Requests that start runs go before the next step of the runs already
 * going. Without this, a burst of messages waits behind the model
 * calls of the runs it started: each accepted run's SDK request and streamed
 * answer take the event loop that the next request's parsing and start
 * need, and the last message of a burst of 200 saw its `run.created`
 * seconds after the first. While any such request is being taken (from the
 * moment its body is in until its run started, or it was refused), a run's
 * next step (its model call) waits for it, at most `maxWaitMs`: a steady
 * stream of requests delays a step by no more than that.
 */
export interface Intake {
  /** A request that starts a run has arrived; call what this returns once it is taken (again: no effect). It counts for `maxWaitMs` at most. */
  begin(): () => void;
  /** Resolves once no request is being taken, `maxWaitMs` (or `atMostMs`, if less) after it was called, or when `signal` aborts. */
  quiet(options?: { signal?: AbortSignal | undefined; atMostMs?: number }): Promise<void>;
  /** Requests being taken. */
  readonly taking: number;
  /** Model calls waiting for them. */
  readonly waiting: number;
  /** Model calls that waited so far, and how long in all (ms). */
  readonly held: { calls: number; ms: number };
}

export function createIntake({ maxWaitMs }: { maxWaitMs: number }): Intake {
  let taking = 0;
  const waiters = new Set<() => void>();
  const held = { calls: 0, ms: 0 };
  return {
    begin() {
      // Off: nothing ever waits, so nothing is counted.
      if (maxWaitMs <= 0) return () => {};
      taking++;
      let taken = false;
      const take = () => {
        if (taken) return;
        taken = true;
        clearTimeout(slow);
        if (--taking > 0) return;
        for (const wake of waiters) wake();
        waiters.clear();
      };
      // A request slower than that (a webhook host's DNS, a busy database) is no longer put first: nothing holds the runs longer.
      const slow = setTimeout(take, maxWaitMs).unref();
      return take;
    },
    quiet({ signal, atMostMs = Infinity } = {}) {
      const waitMs = Math.min(maxWaitMs, atMostMs);
      if (taking === 0 || waitMs <= 0 || signal?.aborted) return Promise.resolve();
      held.calls++;
      const since = performance.now();
      return new Promise<void>((resolve) => {
        const wake = () => {
          held.ms += performance.now() - since;
          clearTimeout(timer);
          signal?.removeEventListener("abort", wake);
          waiters.delete(wake);
          resolve();
        };
        const timer = setTimeout(wake, waitMs).unref();
        signal?.addEventListener("abort", wake, { once: true });
        waiters.add(wake);
      });
    },
    get taking() {
      return taking;
    },
    get waiting() {
      return waiters.size;
    },
    held,
  };
}
