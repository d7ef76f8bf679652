import { repairMessages } from "../core/history.js";
import type { Services } from "../services.js";
import type { RunRow } from "../store/schema.js";
import type { Repositories } from "../store/store.js";
import {
  CANCELLED_WAITING,
  closeWaitingRun,
  INTERRUPTED_WAITING,
  SUPERSEDED,
  type WaitingRunEnd,
} from "./close-waiting-run.js";
import { historyOf } from "../store/message-repository.js";
import { createRunAppender, positionOf, type RunPosition } from "./run-numbering.js";

/** A queued run just started here: where its writer takes over. */
export interface StartedQueuedRun {
  run: RunRow;
  position: RunPosition;
  /** A paused run it superseded, ended in the same transaction. */
  superseded: RunRow | undefined;
  /** More runs wait behind it: its end starts the next. */
  more: boolean;
}

/**
 * Starts the conversation's next queued run, if nothing runs there: under
 * the conversation's lock, a paused run gives way (superseded, as by any
 * new message; one waiting out an outage, only if it was asked to stop as it
 * parked), the queued run becomes `running` under this process's
 * lease, and its `run.started`, a repair of unanswered calls and its user
 * message are written — all in one transaction, so a crash leaves it queued
 * for the sweeper. Undefined when there is nothing to start, or a run still
 * runs (whoever ends it starts the next).
 */
export async function startQueuedRun(
  services: Services,
  conversationId: string,
): Promise<StartedQueuedRun | undefined> {
  const { store, config, instanceId } = services;
  const started = await store.transaction(async (tx) => {
    if (!(await tx.queue.lockConversation(conversationId))) return undefined;
    const holding = await tx.queue.holdingOf(conversationId);
    if (holding?.status === "running") return undefined;
    const next = await tx.queue.lockNext(conversationId);
    if (!next) return undefined;
    const waiting =
      holding &&
      (holding.status === "waiting" ? await tx.runs.lockParked(holding.id) : await tx.runs.lockWaiting(holding.id));
    // Answered or woken (running again) since it was read, or waiting out an outage (it goes on by itself): whoever ends it starts the queue.
    if (holding && (!waiting || (waiting.status === "waiting" && !waiting.cancelRequested))) return undefined;
    const superseded = waiting ? await closeWaitingRun(tx, waiting, givingWay(waiting)) : undefined;
    const run = await tx.queue.start(next.id, { owner: instanceId, leaseMs: config.runs.leaseMs });
    const position = await beginRun(tx, run, next.queuedContent ?? []);
    return {
      run: position.run,
      position: position.position,
      superseded,
      more: (await tx.queue.queuedCount(conversationId)) > 0,
    };
  });
  if (started?.superseded) {
    services.signals.notify(started.superseded.id);
    services.telemetry.runEnded(started.superseded);
  }
  if (started) services.signals.notify(started.run.id);
  return started;
}

/**
 * How the run holding the conversation gives way: a paused one is superseded
 * by any new message; one waiting out an outage only when it was asked to
 * stop (interrupted, or cancelled) as it parked, after it last looked.
 */
const givingWay = (run: RunRow): WaitingRunEnd =>
  run.status === "requires_action"
    ? SUPERSEDED
    : run.cancelReason === "superseded"
      ? INTERRUPTED_WAITING
      : CANCELLED_WAITING;

/** A queued run's first writes: `run.started`, the repair of calls a crash left unanswered, then its user message. */
async function beginRun(tx: Repositories, run: RunRow, content: NonNullable<RunRow["queuedContent"]>) {
  const appender = createRunAppender(tx, run, await positionOf(tx, run));
  await appender.event("run.started", {});
  // From here on nothing else appends to the conversation: its tail is read after the run holds it.
  const tail = await tx.messages.sinceLastAssistant(run.conversationId);
  await appender.repairs(repairMessages(historyOf(tail)));
  const userSeq = await appender.messages([{ role: "user", content }]);
  await tx.notify("loopd_run_events", run.id);
  return { run: (await tx.runs.setFirstSeq(run.id, userSeq)) ?? run, position: appender.position };
}
