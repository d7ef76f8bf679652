import type { RunRow } from "../store/schema.js";
import { followRunEvents } from "./follow-run-events.js";
import type { RunManager } from "./run-manager.js";
import type { Services } from "./services.js";

/**
 * Stops a run at its next safe point and waits (a bounded time) for it to
 * end, so the conversation takes the next message as soon as this returns.
 * A run already finished is returned unchanged.
 */
export async function cancelRun(
  services: Services,
  runs: RunManager,
  run: RunRow,
  { waitMs = 10_000 }: { waitMs?: number } = {},
): Promise<RunRow> {
  if (run.status !== "running" && run.status !== "queued") return run;
  await services.store.runs.requestCancel(run.id);
  if (!runs.cancelLocal(run.id)) {
    // Another process owns it: the broadcast reaches it at once, and failing
    // that it reads the request when it renews its lease. Wait for the run's
    // terminal event, which any process can see.
    await services.broadcast.send(services.store.db, "loopd_run_cancel", run.id);
    const timeout = AbortSignal.timeout(waitMs);
    const lastSeq = await services.store.events.lastSeq(run.id);
    for await (const _ of followRunEvents(services, { runId: run.id, after: lastSeq, signal: timeout })) {
      // drained until the terminal event or the timeout
    }
  }
  await runs.settled(run.id);
  return (await services.store.runs.get(run.id)) ?? run;
}
