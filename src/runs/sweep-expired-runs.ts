import { describeError } from "../errors.js";
import type { Services } from "../services.js";
import type { RunRow } from "../store/schema.js";

/**
 * Takes over the runs whose process died, a few at a time: each batch is
 * claimed in one statement (skipping rows another sweeper holds), and its
 * runs are recovered before the next batch is claimed, so a claimed run's
 * lease never runs out while it waits its turn. With `orphanedBefore`, also
 * every run whose lease was granted before then, whatever its lease (only
 * right when no process but this one, started then, can own a run).
 */
export async function sweepExpiredRuns({
  services: { store, config, log, instanceId },
  hold,
  recover,
  orphanedBefore,
  batchSize = 10,
}: {
  services: Services;
  /** Called with each batch as soon as it is claimed: their leases must be kept until each is recovered. */
  hold: (runs: RunRow[]) => void;
  recover: (run: RunRow) => Promise<void>;
  orphanedBefore?: Date | undefined;
  /** @default 10 */
  batchSize?: number;
}): Promise<void> {
  try {
    for (;;) {
      const claimed = await store.runs.claimExpired({
        owner: instanceId,
        leaseMs: config.runs.leaseMs,
        limit: batchSize,
        grantedBefore: orphanedBefore,
      });
      hold(claimed);
      for (const run of claimed) await recover(run);
      if (claimed.length < batchSize) return;
    }
  } catch (err) {
    log.warn({ err: describeError(err) }, "run sweep failed");
  }
}
