import type { ModelProvider } from "../core/model-provider.js";

/**
 * Requests that start runs go before the next model call of the runs
 * already going. Without this, a burst of messages waits behind the model
 * calls of the runs it started: each accepted run's SDK request and streamed
 * answer take the event loop that the next request's parsing and start
 * need, and the last message of a burst of 200 saw its `run.created`
 * seconds after the first. While any such request is being taken (from the
 * moment its body is in until its run started, or it was refused), a model
 * call waits for it, at most `maxWaitMs`: a steady stream of requests delays
 * a call by no more than that.
 */
export interface Intake {
  /** A request that starts a run has arrived; call what this returns once it is taken (again: no effect). */
  begin(): () => void;
  /** Resolves once no request is being taken, or `maxWaitMs` after it was called. */
  quiet(): Promise<void>;
  /** Requests being taken. */
  readonly taking: number;
  /** Model calls waiting for them. */
  readonly waiting: number;
}

export function createIntake({ maxWaitMs }: { maxWaitMs: number }): Intake {
  let taking = 0;
  const waiters = new Set<() => void>();
  return {
    begin() {
      taking++;
      let taken = false;
      return () => {
        if (taken) return;
        taken = true;
        if (--taking > 0) return;
        for (const wake of waiters) wake();
        waiters.clear();
      };
    },
    quiet() {
      if (taking === 0 || maxWaitMs <= 0) return Promise.resolve();
      return new Promise<void>((resolve) => {
        const wake = () => {
          clearTimeout(timer);
          waiters.delete(wake);
          resolve();
        };
        const timer = setTimeout(wake, maxWaitMs).unref();
        waiters.add(wake);
      });
    },
    get taking() {
      return taking;
    },
    get waiting() {
      return waiters.size;
    },
  };
}

/** The provider, its calls sent once the intake is quiet. */
export const afterIntake = (provider: ModelProvider, intake: Intake): ModelProvider => ({ ...provider, whenReady: intake.quiet });
