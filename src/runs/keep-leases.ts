import { describeError } from "../errors.js";
import type { Services } from "../services.js";
import { cancelReasonOf, LeaseLost } from "../core/interruptions.js";
import type { LocalRun } from "./local-run.js";

/**
 * Extends the leases of the runs this process executes or is recovering.
 * A run whose lease was not extended was taken over (this process stalled
 * past its lease) or ended elsewhere: it stops at once and writes nothing
 * more. A cancel asked through another process is heard here too.
 */
export async function keepLeases({
  services: { store, config, log, instanceId },
  active,
  recovering,
}: {
  services: Services;
  active: ReadonlyMap<string, LocalRun>;
  recovering: ReadonlySet<string>;
}): Promise<void> {
  const runIds = [...active.keys(), ...recovering];
  if (runIds.length === 0) return;
  try {
    const renewed = await store.runs.renewLeases({ owner: instanceId, runIds, leaseMs: config.runs.leaseMs });
    for (const { id, cancelRequested, cancelReason } of renewed) {
      if (cancelRequested) active.get(id)?.controller.abort(cancelReasonOf(cancelReason));
    }
    const kept = new Set(renewed.map((r) => r.id));
    for (const [id, run] of active) {
      if (runIds.includes(id) && !kept.has(id))
        run.controller.abort(new LeaseLost(`run ${id} was taken over by another process`));
    }
  } catch (err) {
    log.warn({ err: describeError(err) }, "lease renewal failed");
  }
}
