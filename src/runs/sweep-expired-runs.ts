import { describeError } from "../errors.js";
import type { Services } from "../services.js";
import type { RunRow } from "../store/schema.js";

/**
 * Takes over the runs whose process died, a few at a time: each batch is
 * claimed in one statement (skipping rows another sweeper holds), and its
 * runs are recovered before the next batch is claimed, so a claimed run's
 * lease never runs out while it waits its turn. With `all`, every active run
 * is taken, whatever its lease (only right when no other process can own one).
 */
export async function sweepExpiredRuns({
  services: { store, config, log, instanceId },
  hold,
  recover,
  all = false,
  batchSize = 10,
}: {
  services: Services;
  /** Called with each batch as soon as it is claimed: their leases must be kept until each is recovered. */
  hold: (runs: RunRow[]) => void;
  recover: (run: RunRow) => Promise<void>;
  /** @default false */
  all?: boolean;
  /** @default 10 */
  batchSize?: number;
}): Promise<void> {
  try {
    for (;;) {
      const claimed = await store.runs.claimExpired({ owner: instanceId, leaseMs: config.runLeaseMs, limit: batchSize, all });
      hold(claimed);
      for (const run of claimed) await recover(run);
      if (claimed.length < batchSize) return;
    }
  } catch (err) {
    log.warn({ err: describeError(err) }, "run sweep failed");
  }
}
