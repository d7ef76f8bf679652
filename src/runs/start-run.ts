import type { NewMessage, UserBlock } from "../core/messages.js";
import { emptyUsage } from "../core/usage.js";
import { repairMessages } from "../core/history.js";
import { AppError, notFound } from "../errors.js";
import { newId } from "../store/ids.js";
import type { RunRequest, RunRow, WebhookSetting } from "../store/schema.js";
import type { Repositories } from "../store/store.js";
import type { NewRunFields } from "../store/run-repository.js";
import { closeWaitingRun, INTERRUPTED_WAITING, SUPERSEDED } from "./close-waiting-run.js";
import { historyOf } from "../store/message-repository.js";
import { createRunAppender, newRunPosition, type RunPosition } from "./run-numbering.js";
import type { Services } from "../services.js";
import type { ConversationRow } from "../store/schema.js";
import type { LoggedEvent } from "../store/event-repository.js";
import { toPgSafe } from "../store/pg-safe.js";
import type { Appended } from "./history-cache.js";
import { startedEvents } from "./committed-events.js";
import { startedRunPosition } from "./run-numbering.js";

/**
 * A run about to execute here, with what whoever started it already holds
 * (so the run need not read it again): its numbers go on from `position`.
 * `created`: just created by a message (`conversation` as the request read
 * it; what its creation appended and committed, when it was created in one
 * statement). `answered`: a pause answered (the approved calls run first).
 * `dequeued`: a queued run started. `recovered`: taken over from a process
 * that stopped (its writer made by the recovery; the approved calls that
 * never began run first). `woken`: a run that waited out an outage, claimed
 * here when its wake time came (its writer made by the waker; its next model
 * call is the probe).
 */
export type RunStart =
  | {
      kind: "created";
      run: RunRow;
      position: RunPosition;
      conversation: ConversationRow;
      appended: Appended | undefined;
      committed: LoggedEvent[] | undefined;
    }
  | { kind: "answered"; run: RunRow; position: RunPosition; approvedCalls: string[] }
  | { kind: "dequeued"; run: RunRow; position: RunPosition }
  | { kind: "recovered"; run: RunRow; approvedCalls: string[] }
  | { kind: "woken"; run: RunRow };

/** What a conversation does with a message that comes while a run holds it. */
export type OnBusy = "reject" | "enqueue" | "interrupt";

export interface RunToCreate {
  runId: string;
  tenant: string;
  conversation: { id: string; provider: string; model: string };
  content: UserBlock[];
  request: RunRequest;
  requestHash: string;
  idempotencyKey: string | undefined;
  webhook: WebhookSetting | null;
  /**
   * What comes before the run's first message, written in its transaction
   * (a client's own history, sent with `/v1/responses`): it returns the
   * messages the run opens with in place of the user message (outputs of the
   * history's last calls), or none. Such a run is never queued.
   */
  prelude?: ((tx: Repositories) => Promise<NewMessage[]>) | undefined;
}

/** A run created: started here (`position`), or queued (then, maybe, a run it interrupts, and whether the queue needs a start). */
export type CreatedRun =
  | { run: RunRow; position: RunPosition; superseded: RunRow | undefined }
  | {
      run: RunRow;
      queued: true;
      interrupts: string | undefined;
      behind: string | undefined;
      /** A run waiting out an outage it interrupted (ended). */
      superseded: RunRow | undefined;
    };

/**
 * The general path of a run's creation, in one transaction under the
 * conversation's lock (the lock every creator and the starter of a queued
 * run take): a run waiting for the application gives way (its pending calls
 * answered "not executed", ended in the same transaction); with nothing
 * running and nothing queued the run starts, its user message after any
 * repair of calls a crash left unanswered; otherwise `reject` is a 409 and
 * `enqueue`/`interrupt` queue it (an interrupt ahead of enqueued runs, and
 * the running run asked to stop, `superseded`). A run waiting out an outage
 * holds the conversation as a running one does; an interrupt ends it here and
 * now (cancelled, `superseded`: it runs nowhere to be asked to stop).
 */
export async function createRunInTransaction(
  { store, config, instanceId }: Services,
  r: RunToCreate,
  onBusy: OnBusy,
): Promise<CreatedRun> {
  return store.transaction(async (tx) => {
    if (!(await tx.queue.lockConversation(r.conversation.id))) throw notFound("conversation", r.conversation.id);
    let holding = await tx.queue.holdingOf(r.conversation.id);
    const queued = await tx.queue.queuedCount(r.conversation.id);
    const interrupted =
      holding?.status === "waiting" && onBusy === "interrupt" ? await tx.runs.lockParked(holding.id) : undefined;
    // Not parked any more: woken meanwhile, it runs, and is interrupted as a running run is.
    if (holding?.status === "waiting" && onBusy === "interrupt")
      holding = interrupted ? undefined : await tx.queue.holdingOf(r.conversation.id);
    const ended = interrupted && (await closeWaitingRun(tx, interrupted, INTERRUPTED_WAITING));
    const waitsBehind = holding?.status === "running" || holding?.status === "waiting" || queued > 0;
    // A client's own history (a prelude) goes on a free conversation only: it cannot wait behind a run that adds to it.
    if (waitsBehind && (onBusy === "reject" || r.prelude)) {
      throw new AppError("conversation_busy", `conversation ${r.conversation.id} already has an active run`, {
        active_run_id: holding?.id ?? (await tx.queue.lastQueued(r.conversation.id, 1)) ?? null,
      });
    }
    if (waitsBehind)
      return queueRun(tx, r, {
        ended,
        holding,
        queued,
        rank: onBusy === "interrupt" ? 0 : 1,
        maxQueued: config.runs.maxQueued,
        cap: config.runs.maxActivePerTenant,
      });
    // A run waiting for the application gives way: a crash leaves either the pause or the new run.
    const waiting = holding && (await tx.runs.lockWaiting(holding.id));
    const superseded = waiting ? await closeWaitingRun(tx, waiting, SUPERSEDED) : ended;
    await checkTenantCap(tx, r.tenant, config.runs.maxActivePerTenant);
    const run = await tx.runs.insert({
      ...newRunFields(r),
      status: "running",
      leaseOwner: instanceId,
      leaseMs: config.runs.leaseMs,
    });
    const opening = (await r.prelude?.(tx)) ?? [];
    // Read after the run's row: from there on, nothing else appends to the conversation.
    const tail = await tx.messages.sinceLastAssistant(r.conversation.id);
    const appender = createRunAppender(tx, run, newRunPosition(tail.at(-1)?.seq ?? 0));
    await appender.event("run.created", {});
    await appender.repairs(repairMessages([...historyOf(tail), ...opening]));
    const userSeq = await appender.messages(opening.length > 0 ? opening : [{ role: "user", content: r.content }]);
    return { run: (await tx.runs.setFirstSeq(r.runId, userSeq)) ?? run, position: appender.position, superseded };
  });
}

async function queueRun(
  tx: Repositories,
  r: RunToCreate,
  {
    ended,
    holding,
    queued,
    rank,
    maxQueued,
    cap,
  }: {
    /** A run waiting out an outage this one interrupted, ended in this transaction. */
    ended: RunRow | undefined;
    holding: RunRow | undefined;
    queued: number;
    rank: 0 | 1;
    maxQueued: number;
    cap: number;
  },
): Promise<CreatedRun> {
  if (queued >= maxQueued) {
    throw new AppError(
      "queue_full",
      `conversation ${r.conversation.id} has ${queued} queued runs, the most MAX_QUEUED_RUNS allows; wait for one to start, or cancel one`,
      { queued_runs: queued },
    );
  }
  await checkTenantCap(tx, r.tenant, cap);
  const queuedBehind = (await tx.queue.lastQueued(r.conversation.id, rank)) ?? holding?.id ?? null;
  const run = await tx.queue.insert({
    run: newRunFields(r),
    content: r.content,
    rank,
    queuedBehind,
  });
  await createRunAppender(tx, run, newRunPosition(0)).event("run.created", { status: "queued" });
  const interrupting = rank === 0 && holding?.status === "running" ? holding.id : undefined;
  const found = interrupting && (await tx.runs.requestCancel(interrupting, "superseded"));
  // Parked out an outage since it was read (a park takes no conversation lock, and
  // no process runs it to be told): it ends here, as one found parked does.
  const parked = found === "waiting" ? await tx.runs.lockParked(interrupting!) : undefined;
  if (parked) ended = await closeWaitingRun(tx, parked, INTERRUPTED_WAITING);
  const interrupts = found === "running" ? interrupting : undefined;
  // `behind`: the running (or outage-waiting) run whose end starts the queue; none (the run before ended, or waits for the application): start it now.
  const goesOn = !parked && (holding?.status === "running" || holding?.status === "waiting");
  return { run, queued: true, interrupts, behind: goesOn ? holding!.id : undefined, superseded: ended };
}

/** Counted under a lock of the tenant's, in the database: the cap holds across instances. */
async function checkTenantCap(tx: Repositories, tenant: string, cap: number): Promise<void> {
  if (cap <= 0) return;
  const open = await tx.runs.openOfTenant(tenant);
  if (open >= cap) throw tooManyRuns(tenant, open);
}

export const tooManyRuns = (tenant: string, open: number) =>
  new AppError(
    "too_many_runs",
    `tenant ${tenant} has ${open} active or paused runs, the most MAX_ACTIVE_RUNS_PER_TENANT allows; wait for one to end, answer or cancel a paused one`,
    { active_runs: open },
  );

/** The common case in one statement (`loopd_start_run`): a connection held for one round trip, not a transaction of seven; null when it must take the general path (a prelude takes it too). */
export async function startRunAtOnce(
  { store, config, instanceId }: Services,
  r: RunToCreate,
): Promise<{
  run: RunRow;
  position: RunPosition;
  appended: Appended;
  committed: LoggedEvent[];
  superseded: undefined;
} | null> {
  if (r.prelude) return null;
  const messageId = newId("msg");
  const started = await store.runs.start({
    run: { ...newRunFields(r), leaseOwner: instanceId },
    leaseMs: config.runs.leaseMs,
    tenant: r.tenant,
    cap: config.runs.maxActivePerTenant,
    messageId,
    content: r.content,
  });
  if (started && "openRuns" in started) throw tooManyRuns(r.tenant, started.openRuns);
  if (!started) return null;
  // The user message as the database holds it (toPgSafe), so the run need not read it back.
  const appended = {
    firstSeq: started.run.firstSeq!,
    messages: [{ role: "user" as const, content: toPgSafe(r.content) }],
  };
  // What it committed for the run's readers: a stream opened now takes it from here.
  const committed = startedEvents(started.run, { id: messageId, content: r.content });
  return {
    run: started.run,
    position: startedRunPosition(started.run.firstSeq!),
    appended,
    committed,
    superseded: undefined,
  };
}

/** The run's row as every way of creating it writes it. */
export const newRunFields = (r: RunToCreate): NewRunFields => ({
  id: r.runId,
  conversationId: r.conversation.id,
  provider: r.conversation.provider,
  model: r.request.model ?? r.conversation.model,
  usage: emptyUsage(),
  request: r.request,
  idempotencyKey: r.idempotencyKey ?? null,
  requestHash: r.requestHash,
  webhook: r.webhook,
});

/** A new run's id. */
export const newRunId = () => newId("run");
