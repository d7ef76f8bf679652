import { describeError } from "../errors.js";
import type { Services } from "../services.js";
import { closeWaitingRun, EXPIRED } from "./close-waiting-run.js";

/**
 * Ends the paused runs nobody answered in time: their pending calls get
 * "not executed: no answer in time" results and the runs end `incomplete`
 * (`action_expired`). Any process may do it; each run is ended in one
 * transaction, under a lock that an answer arriving at the same moment
 * contends for, so exactly one of the two wins.
 */
export async function expireOverdueActions({
  services,
  startQueued,
  batchSize = 20,
}: {
  services: Services;
  /** Starts the run queued behind one that ended here, if any. */
  startQueued?: (conversationId: string) => Promise<void>;
  batchSize?: number;
}): Promise<void> {
  const { store, signals, log } = services;
  try {
    for (const id of await store.runs.overdue(batchSize)) {
      const ended = await store.transaction(async (tx) => {
        const run = await tx.runs.lockWaiting(id, { skipLocked: true, overdue: true });
        return run && closeWaitingRun(tx, run, EXPIRED);
      });
      if (ended) {
        signals.notify(id);
        services.telemetry.runEnded(ended);
        log.info(
          { run_id: id, conversation_id: ended.conversationId },
          "a paused run got no answer in time; its calls were given up",
        );
        await startQueued?.(ended.conversationId);
      }
    }
  } catch (err) {
    log.warn({ err: describeError(err) }, "expiring overdue actions failed");
  }
}
