import { isActiveRun, OPEN_RUN_STATUSES, type RunRow } from "../store/schema.js";
import { CANCELLED_WAITING, closeWaitingRun } from "./close-waiting-run.js";
import type { RunManager } from "./run-manager.js";
import type { Services } from "../services.js";
import { waitForRunEnd } from "./wait-for-run-end.js";
import { createRunAppender, positionOf } from "./run-numbering.js";
import { runStateOf } from "./run-events.js";

/**
 * Cancels a run (see `cancelOne`), then the child runs its calls of agents
 * started that are still open, and theirs: cancelling a parent cancels its children.
 */
export async function cancelRun(options: {
  services: Services;
  runs: RunManager;
  run: RunRow;
  /** @default 10000 */
  waitMs?: number;
}): Promise<RunRow> {
  const ended = await cancelOne(options);
  const { services } = options;
  for (const child of ended.children ?? []) {
    const run = await services.store.runs.get(child.run_id);
    if (run && OPEN_RUN_STATUSES.includes(run.status as (typeof OPEN_RUN_STATUSES)[number]))
      await cancelRun({ ...options, run });
  }
  return ended;
}

/**
 * Stops a run at its next safe point and waits (a bounded time) for it to
 * end, so the conversation takes the next message as soon as this returns.
 * A run already finished is returned unchanged; one waiting for the
 * application ends at once, its pending calls answered "cancelled", and so
 * does one waiting out an outage (nothing of its failed step was saved).
 */
async function cancelOne({
  services,
  runs,
  run,
  waitMs = 10_000,
}: {
  services: Services;
  runs: RunManager;
  run: RunRow;
  /** @default 10000 */
  waitMs?: number;
}): Promise<RunRow> {
  if (run.status === "queued") {
    const ended = await cancelQueued(services, run);
    if (ended) return ended;
    // Started meanwhile: cancel it as it now stands.
    run = (await services.store.runs.get(run.id)) ?? run;
  }
  if (run.status === "requires_action" || run.status === "waiting") {
    const ended = await cancelWaiting(services, runs, run);
    if (ended) return ended;
    // Answered (or ended) meanwhile: cancel it as it now stands.
    run = (await services.store.runs.get(run.id)) ?? run;
  }
  if (!isActiveRun(run)) return run;
  await services.store.runs.requestCancel(run.id);
  if (!runs.cancelLocal(run.id)) {
    // Another process owns it: the broadcast reaches it at once, and failing
    // that it reads the request when it renews its lease.
    await services.store.notify("loopd_run_cancel", run.id);
  }
  const stopped = (await waitForRunEnd({ services, runs, runId: run.id, signal: AbortSignal.timeout(waitMs) })) ?? run;
  // The cancel came as the step was pausing or parking (after the run's last look at it): the pause is cancelled too.
  const paused = stopped.status === "requires_action" || stopped.status === "waiting";
  return (paused && (await cancelWaiting(services, runs, stopped))) || stopped;
}

/** Ends a run that never started: no model call, no message (its user message is saved only when it starts); undefined when it started meanwhile. */
async function cancelQueued(services: Services, run: RunRow): Promise<RunRow | undefined> {
  const ended = await services.store.transaction(async (tx) => {
    const cancelled = await tx.queue.cancel(run.id);
    if (!cancelled) return undefined;
    const appender = createRunAppender(tx, cancelled, await positionOf(tx, cancelled));
    await appender.event("run.cancelled", { run: runStateOf(cancelled) });
    await tx.notify("loopd_run_events", run.id);
    return cancelled;
  });
  if (ended) {
    services.signals.notify(run.id);
    services.telemetry.runEnded(ended);
  }
  return ended;
}

/** Ends a paused run, or one waiting out an outage, as cancelled (then a run queued behind it starts); undefined when it no longer waits. */
async function cancelWaiting(services: Services, runs: RunManager, run: RunRow): Promise<RunRow | undefined> {
  const ended = await services.store.transaction(async (tx) => {
    const waiting = run.status === "waiting" ? await tx.runs.lockParked(run.id) : await tx.runs.lockWaiting(run.id);
    return waiting && closeWaitingRun(tx, waiting, CANCELLED_WAITING);
  });
  if (ended) {
    services.signals.notify(run.id);
    services.telemetry.runEnded(ended);
    await runs.startQueued(run.conversationId);
  }
  return ended;
}
