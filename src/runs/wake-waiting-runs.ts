import { describeError } from "../errors.js";
import type { Services } from "../services.js";
import type { RunRow } from "../store/schema.js";
import { positionOf } from "./run-numbering.js";
import { createRunWriter, type RunWriter } from "./run-writer.js";
import type { RunStart } from "./start-run.js";

/**
 * Wakes the runs waiting out an outage whose time came, a batch per tick:
 * each is claimed under this process's lease (any process may: the claim
 * skips rows another holds) and goes on here, its next model call the
 * probe; the step's deltas so far are void (`step.restarted`), as the model
 * is called again. A run whose wake is its give-up time ends `failed` with
 * the error that parked it, without another call.
 */
export async function wakeWaitingRuns({
  services,
  launch,
  startQueued,
  batchSize = 10,
}: {
  services: Services;
  launch: (start: RunStart, writer: RunWriter) => void;
  /** Starts the run queued behind one that ended here, if any. */
  startQueued: (conversationId: string) => Promise<void>;
  /** @default 10 */
  batchSize?: number;
}): Promise<void> {
  const { store, config, log, instanceId } = services;
  try {
    const woken = await store.runs.claimWaking({ owner: instanceId, leaseMs: config.runs.leaseMs, limit: batchSize });
    for (const run of woken) {
      const writer = createRunWriter({ services, run, position: await positionOf(store, run) });
      if (givesUp(run)) {
        log.info({ run_id: run.id, probes: run.outageProbes }, "a run waited out an outage to its bound; it fails");
        await writer.finish({
          status: "failed",
          stopReason: "error",
          error: run.error ?? { code: "provider_unavailable", message: "every model was down" },
        });
        await startQueued(run.conversationId);
        continue;
      }
      writer.emit("step.restarted", {
        step: run.steps + 1,
        reason: "every model was down; the model is called again",
      });
      writer.trace({ type: "run.woken", data: { probes: run.outageProbes, steps: run.steps } });
      log.info({ run_id: run.id, probes: run.outageProbes }, "probing the model of a run waiting out an outage");
      launch({ kind: "woken", run }, writer);
    }
  } catch (err) {
    log.warn({ err: describeError(err) }, "waking waiting runs failed");
  }
}

/** Whether this wake is the end of the wait (it was set to the give-up time) rather than a probe. */
const givesUp = (run: RunRow) =>
  run.wakeAt !== null && run.giveUpAt !== null && run.wakeAt.getTime() >= run.giveUpAt.getTime();
