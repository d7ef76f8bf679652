import { type TextBlock } from "../core/messages.js";
import { emptyUsage } from "../core/usage.js";
import type { ToolChoice } from "../core/model-provider.js";
import { repairMessages } from "../agent/repair-history.js";
import { AppError, findInCauseChain, notFound } from "../errors.js";
import { checkSameRequest, hashOfRequest } from "./request-hash.js";
import { newId } from "../store/ids.js";
import type { BudgetInput, RunRequest, RunRow } from "../store/schema.js";
import { settleBudget } from "./settle-budget.js";
import { FINISH_TOOL, type FinishOptions } from "../core/run-settings.js";
import { uniqueViolation } from "../store/unique-violation.js";
import { closeWaitingRun, SUPERSEDED } from "../runs/close-waiting-run.js";
import { historyOf } from "../runs/history-of.js";
import type { Appended } from "../runs/history-cache.js";
import type { RunManager } from "../runs/run-manager.js";
import { toPgSafe } from "../store/pg-safe.js";
import { createRunAppender, newRunPosition, startedRunPosition, type RunPosition } from "../runs/run-numbering.js";
import type { Services } from "../services.js";

export interface SendMessageInput {
  /** Whose conversation it must be. */
  tenant: string;
  conversationId: string;
  content: string | TextBlock[];
  maxSteps?: number | undefined;
  budget?: BudgetInput | undefined;
  /** The run ends with a `finish` call; null turns off the conversation's. */
  finish?: FinishOptions | null | undefined;
  toolChoice?: ToolChoice | undefined;
  model?: string | undefined;
  idempotencyKey?: string | undefined;
}

/**
 * Starts a run: the user message and the run are saved together (with the
 * `run.created` and `message.created` events), then the run executes in the
 * background. With an Idempotency-Key seen before, returns that run instead.
 */
export async function sendMessage(
  { services, runs }: { services: Services; runs: RunManager },
  input: SendMessageInput,
): Promise<{ run: RunRow; replayed: boolean }> {
  const { store, config } = services;
  // At the door, before any statement: a request that would wait in the database's queue is not queued behind it.
  // (A retry with an Idempotency-Key, or a request for an unknown conversation, is told 503 too: nothing changed, it tries again.)
  admit(services);
  const conversation = await store.conversations.get(input.tenant, input.conversationId);
  if (!conversation) throw notFound("conversation", input.conversationId);

  const content: TextBlock[] = typeof input.content === "string" ? [{ type: "text", text: input.content }] : input.content;
  const toolChoice = input.toolChoice ?? "auto";
  const finish = input.finish !== undefined ? input.finish : conversation.finish;
  const offered = [...conversation.tools, ...conversation.clientTools.map((t) => t.name), ...(finish ? [FINISH_TOOL] : [])];
  if (typeof toolChoice === "object" && !offered.includes(toolChoice.name)) {
    throw new AppError("invalid_request", `tool_choice names ${toolChoice.name}, which is not one of this conversation's tools`, {
      field: "tool_choice.name",
      tools: offered,
    });
  }
  const model = input.model ?? conversation.model;
  const budget = settleBudget({
    request: input.budget,
    maxSteps: input.maxSteps,
    conversation: conversation.budget,
    config,
    model,
    priced: services.prices.priceOf(model) !== null,
  });
  const request: RunRequest = { max_steps: budget.max_steps, tool_choice: toolChoice, model: input.model ?? null, budget, finish };
  // The request as the client sent it, not as this server's settings shaped
  // it: an identical retry stays identical across a configuration change.
  const requestHash = hashOfRequest({
    content,
    max_steps: input.maxSteps ?? null,
    tool_choice: input.toolChoice ?? null,
    model: input.model ?? null,
    // Absent from the hash when not sent, so retries from before budgets existed still match.
    ...(input.budget && { budget: input.budget }),
    ...(input.finish !== undefined && { finish: input.finish }),
  });

  if (input.idempotencyKey) {
    const earlier = await store.runs.byIdempotencyKey(conversation.id, input.idempotencyKey);
    if (earlier) return replay(earlier, requestHash);
  }

  for (let attempt = 1; ; attempt++) {
    try {
      // Only a conversation seen with an open run may have one waiting (a retry looks again).
      const supersede = attempt > 1 || conversation.activeRunId !== null;
      const { run, position, appended } = await createRun({ services, conversation, content, request, requestHash, idempotencyKey: input.idempotencyKey, supersede, tenant: input.tenant });
      runs.start(run, { position, conversation, ...(appended && { appended }) });
      return { run, replayed: false };
    } catch (err) {
      // A DELETE got in between the read above and the insert: the run's conversation is gone.
      if (findInCauseChain(err, (e) => ((e as { code?: unknown }).code === "23503" ? true : undefined))) {
        throw notFound("conversation", conversation.id);
      }
      const constraint = uniqueViolation(err);
      if (constraint === null) throw err;
      // Same key sent twice at once: the one that got in is the answer to both.
      const earlier = input.idempotencyKey ? await store.runs.byIdempotencyKey(conversation.id, input.idempotencyKey) : undefined;
      if (earlier) return replay(earlier, requestHash);
      if (constraint !== "runs_one_active_per_conversation_key") throw err;
      const active = await store.runs.activeOf(conversation.id);
      // The run in the way ended meanwhile, or it waits for the application and gives way: try once more.
      if (!active && attempt < 3) continue;
      throw new AppError("conversation_busy", `conversation ${conversation.id} already has an active run`, {
        active_run_id: active?.id ?? null,
      });
    }
  }
}

/** The run and its user message, saved together with their first two events. */
async function createRun({
  services: { store, config, instanceId, signals, telemetry },
  conversation,
  content,
  request,
  requestHash,
  idempotencyKey,
  supersede,
  tenant,
}: {
  services: Services;
  /** Whose run it is: their open runs are counted against `MAX_ACTIVE_RUNS_PER_TENANT`. */
  tenant: string;
  conversation: { id: string; provider: string; model: string };
  content: TextBlock[];
  request: RunRequest;
  requestHash: string;
  idempotencyKey: string | undefined;
  /** Look for a run waiting for the application, and end it. */
  supersede: boolean;
}): Promise<{ run: RunRow; position: RunPosition; appended?: Appended }> {
  const runId = newId("run");
  const cap = config.runs.maxActivePerTenant;
  if (!supersede) {
    // The common case in one statement: a connection held for one round trip, not a transaction of seven.
    const started = await store.runs.start({
      run: {
        id: runId,
        conversation_id: conversation.id,
        provider: conversation.provider,
        model: request.model ?? conversation.model,
        usage: emptyUsage(),
        request,
        idempotency_key: idempotencyKey ?? null,
        request_hash: requestHash,
        lease_owner: instanceId,
      },
      leaseMs: config.runs.leaseMs,
      tenant,
      cap,
      messageId: newId("msg"),
      content,
    });
    if (started && "openRuns" in started) throw tooManyRuns(tenant, started.openRuns);
    if (started) {
      // The user message as the database holds it (toPgSafe), so the run need not read it back.
      const appended = { firstSeq: started.run.firstSeq!, messages: [{ role: "user" as const, content: toPgSafe(content) }] };
      return { run: started.run, position: startedRunPosition(started.run.firstSeq!), appended };
    }
  }
  let superseded: RunRow | undefined;
  const created = await store.transaction(async (tx) => {
    // A run waiting for the application gives way: its pending calls are
    // answered "not executed" and it ends, in the same transaction as the new
    // run begins, so a crash leaves either the pause or the new run.
    const waiting = supersede ? await tx.runs.lockWaitingOf(conversation.id) : undefined;
    superseded = waiting && (await closeWaitingRun(tx, waiting, SUPERSEDED));
    if (cap > 0) {
      // Counted under a lock of the tenant's, in the database: the cap holds across instances.
      const open = await tx.runs.openOfTenant(tenant);
      if (open >= cap) throw tooManyRuns(tenant, open);
    }
    const run = await tx.runs.insert({
      id: runId,
      conversationId: conversation.id,
      status: "running",
      provider: conversation.provider,
      model: request.model ?? conversation.model,
      usage: emptyUsage(),
      request,
      idempotencyKey: idempotencyKey ?? null,
      requestHash,
      leaseOwner: instanceId,
      leaseMs: config.runs.leaseMs,
    });
    // A crash may have left the last tool calls unanswered; answer them before
    // the new user message, where both providers expect their results.
    // (Read after the run's row: from there on, nothing else appends to the conversation.)
    const tail = await tx.messages.sinceLastAssistant(conversation.id);
    const appender = createRunAppender(tx, run, newRunPosition(tail.at(-1)?.seq ?? 0));
    await appender.event("run.created", {});
    await appender.repairs(repairMessages(historyOf(tail)));
    const userSeq = await appender.messages([{ role: "user", content }]);
    return { run: (await tx.runs.setFirstSeq(runId, userSeq)) ?? run, position: appender.position };
  });
  if (superseded) {
    signals.notify(superseded.id);
    telemetry.runEnded(superseded);
  }
  return created;
}

/**
 * Admission control: while the database keeps statements waiting longer than
 * DB_ADMISSION_WAIT_MS, a new run is refused at once, so the runs already
 * accepted get the connections they need to finish.
 */
function admit({ store, config }: Services): void {
  const limit = config.database.admissionWaitMs;
  const waited = store.longestWaitMs();
  if (limit === 0 || waited <= limit) return;
  throw new AppError("unavailable", `the database is busy: a statement has waited ${Math.round(waited)} ms for it, more than DB_ADMISSION_WAIT_MS (${limit} ms); try again shortly`, { reason: "database_busy" });
}

const tooManyRuns = (tenant: string, open: number) =>
  new AppError("too_many_runs", `tenant ${tenant} has ${open} active or paused runs, the most MAX_ACTIVE_RUNS_PER_TENANT allows; wait for one to end, answer or cancel a paused one`, { active_runs: open });

function replay(earlier: RunRow, requestHash: string): { run: RunRow; replayed: boolean } {
  checkSameRequest(earlier.requestHash, requestHash, { run_id: earlier.id });
  return { run: earlier, replayed: true };
}
