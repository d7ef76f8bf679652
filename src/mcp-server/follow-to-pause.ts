import { followRunEvents } from "../runs/follow-run-events.js";
import type { Services } from "../services.js";
import { isActiveRun, type RunRow } from "../store/schema.js";

/** The events that may end a step: the run is read again after them, for its count of steps. */
const STEP_ENDS = new Set(["message.created", "tool_call.completed"]);

/**
 * Follows a run's events after `after` until it ends or pauses (or `signal`
 * aborts), calling `onSteps` with its count of steps as they grow; returns
 * the run as it then stands.
 */
export async function followToPause(
  services: Services,
  {
    run,
    after,
    signal,
    onSteps,
  }: { run: RunRow; after: number; signal: AbortSignal; onSteps: (steps: number) => Promise<void> },
): Promise<RunRow> {
  let latest = run;
  const events = followRunEvents(services, { runId: run.id, conversationId: run.conversationId, after, signal });
  for await (const batch of events) {
    if (!batch.some((event) => STEP_ENDS.has(event.type))) continue;
    latest = (await services.store.runs.get(run.id)) ?? latest;
    await onSteps(latest.steps);
  }
  latest = (await services.store.runs.get(run.id)) ?? latest;
  if (!isActiveRun(latest) || latest.status === "requires_action") await onSteps(latest.steps);
  return latest;
}
