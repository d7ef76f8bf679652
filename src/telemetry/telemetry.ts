import type { AgentEvent } from "../core/agent-events.js";
import type { RunOutcome } from "../core/run-outcome.js";
import type { RunRequest, RunRow } from "../store/schema.js";

/** What the telemetry hears of one run while it executes in this process. */
export interface RunObserver {
  /** Each event of the run's loop, as it is emitted. */
  onEvent(event: AgentEvent): void;
  /** The execution here is over: the loop's result, or null when it stopped without one (interrupted, its conversation gone). */
  end(result: RunOutcome | null): void;
}

/**
 * Metrics and traces. They listen to what runs do and never change it: a
 * telemetry that throws or stalls must not reach a run, so implementations
 * only count and buffer on these calls.
 */
export interface Telemetry {
  /** A run begins executing here: created, answered after a pause, or taken over from another process. */
  runStarted(run: RunRow): RunObserver;
  /** A run's end (or its pause for the application) was recorded, by whichever path recorded it; `request` names its agent. */
  runEnded(run: Pick<RunRow, "status" | "stopReason"> & { request?: Pick<RunRequest, "agent"> }): void;
  /** Sends what is buffered now. */
  flush(): Promise<void>;
  /** Sends what is still buffered, then stops. */
  close(): Promise<void>;
}

/** Several telemetries as one; each hears everything, in order. */
export function combineTelemetry(parts: Telemetry[]): Telemetry {
  if (parts.length === 1) return parts[0]!;
  return {
    runStarted(run) {
      const observers = parts.map((p) => p.runStarted(run));
      return {
        onEvent: (event) => observers.forEach((o) => o.onEvent(event)),
        end: (result) => observers.forEach((o) => o.end(result)),
      };
    },
    runEnded: (run) => parts.forEach((p) => p.runEnded(run)),
    flush: () => all((p) => p.flush()),
    close: () => all((p) => p.close()),
  };
  async function all(each: (part: Telemetry) => Promise<void>) {
    await Promise.all(parts.map(each));
  }
}
