import { isActiveRun, type RunRow } from "../store/schema.js";
import type { RunManager } from "./run-manager.js";
import type { Services } from "../services.js";

/**
 * The run once it has ended, or undefined if it no longer exists. A run of
 * this process is awaited directly; one of another process is polled (every
 * committed event of a local run also wakes the wait).
 */
export async function waitForRunEnd({
  services,
  runs,
  runId,
  signal,
}: {
  services: Pick<Services, "store" | "signals">;
  runs: RunManager;
  runId: string;
  /** Stops waiting: the run is then returned as it is. */
  signal?: AbortSignal | undefined;
}): Promise<RunRow | undefined> {
  const wakeUps = services.signals.subscribe(runId);
  try {
    for (;;) {
      await runs.settled(runId, signal);
      const run = await services.store.runs.get(runId);
      if (!run || !isActiveRun(run) || signal?.aborted) return run;
      await wakeUps.wait({ timeoutMs: 250, signal });
    }
  } finally {
    wakeUps.close();
  }
}
