import type { UserBlock } from "../core/messages.js";
import type { UserInputBlock } from "../core/attachment-input.js";
import { attachUserContent } from "../attachments/attach-user-content.js";
import { checkMessageText } from "./check-message-text.js";
import type { ToolChoice } from "../core/model-provider.js";
import { AppError, findInCauseChain, notFound } from "../errors.js";
import { checkSameRequest, hashOfRequest } from "./request-hash.js";
import type { BudgetInput, OnProviderOutage, RunRequest, RunRow, WebhookSetting } from "../store/schema.js";
import { checkWebhookUrl } from "../webhooks/check-webhook-url.js";
import { Superseded } from "../core/interruptions.js";
import {
  createRunInTransaction,
  newRunId,
  startRunAtOnce,
  type CreatedRun,
  type OnBusy,
  type RunToCreate,
} from "../runs/start-run.js";
import { settleBudget } from "./settle-budget.js";
import { checkFallbacks, costLimitOf, type FallbackInput } from "./check-fallbacks.js";
import { checkModel } from "./check-model.js";
import { summaryModelOf } from "./check-conversation-models.js";
import { FINISH_TOOL, type FinishOptions } from "../core/run-settings.js";
import { isLockConflict, uniqueViolation } from "../store/unique-violation.js";
import type { RunManager } from "../runs/run-manager.js";
import type { Services } from "../services.js";

export interface SendMessageInput {
  /** Whose conversation it must be. */
  tenant: string;
  conversationId: string;
  /** Text, or blocks: text, images and documents (checked and stored here). */
  content: string | UserInputBlock[];
  /** The request's field a block of `content` is named by in a 400. @default `body.content[i]` */
  contentField?: ((index: number) => string) | undefined;
  /** The request's field that holds the message's text, named when it is too long. @default `body.content` */
  textField?: string | undefined;
  maxSteps?: number | undefined;
  budget?: BudgetInput | undefined;
  /** The run ends with a `finish` call; null turns off the conversation's. */
  finish?: FinishOptions | null | undefined;
  toolChoice?: ToolChoice | undefined;
  model?: string | undefined;
  idempotencyKey?: string | undefined;
  /** What to do when a run holds the conversation. @default "reject" */
  onBusy?: OnBusy | undefined;
  /** This run's webhook (null: none); absent: the conversation's. */
  webhook?: WebhookSetting | null | undefined;
  /** What this run does when every model is down; absent: what the conversation says. */
  onProviderOutage?: OnProviderOutage | undefined;
  /** This run's fallbacks ([]: none); absent: the conversation's. */
  fallbacks?: FallbackInput[] | undefined;
  /** `/v1/responses` (no Idempotency-Key there, so not hashed): instructions for this run only; the most each model call may write. */
  instructions?: string | null | undefined;
  maxOutputTokens?: number | null | undefined;
  /** `/v1/responses` with a client's own history: written with the run (see `RunToCreate.prelude`); its run is never queued. */
  prelude?: RunToCreate["prelude"];
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
  checkMessageText(input.content, {
    maxBytes: config.bodies.messageTextBytes,
    field: input.textField ?? "body.content",
  });
  // At the door, before any statement: a request that would wait in the database's queue is not queued behind it.
  // (A retry with an Idempotency-Key, or a request for an unknown conversation, is told 503 too: nothing changed, it tries again.)
  admit(services);
  const conversation = await store.conversationForRun({ scope: input.tenant, id: input.conversationId });
  if (!conversation) throw notFound("conversation", input.conversationId);

  const toolChoice = input.toolChoice ?? "auto";
  const finish = input.finish !== undefined ? input.finish : conversation.finish;
  const offered = [
    ...conversation.tools,
    ...conversation.clientTools.map((t) => t.name),
    ...(finish ? [FINISH_TOOL] : []),
  ];
  if (typeof toolChoice === "object" && !offered.includes(toolChoice.name)) {
    throw new AppError(
      "invalid_request",
      `tool_choice names ${toolChoice.name}, which is not one of this conversation's tools`,
      { field: "tool_choice.name", tools: offered },
    );
  }
  const model = input.model ?? conversation.model;
  // Checked again at each run: the server's settings may have changed since the conversation was saved.
  const modelField = input.model !== undefined ? "body.model" : "conversation.model";
  checkModel(config, {
    provider: conversation.provider,
    model,
    field: { provider: "conversation.provider", model: modelField },
  });
  const summaryModel = summaryModelOf(conversation.context);
  if (summaryModel !== null)
    checkModel(config, {
      provider: conversation.provider,
      model: summaryModel,
      field: { provider: "conversation.provider", model: "conversation.context.summary_model" },
    });
  const budget = settleBudget({
    request: input.budget,
    maxSteps: input.maxSteps,
    conversation: conversation.budget,
    config,
    model,
    summaryModel,
    priced: (m) => services.prices.priceOf(m) !== null,
    fields: {
      model: modelField,
      summaryModel: "conversation.context.summary_model",
      conversationCost: "conversation.budget.max_cost_usd",
    },
  });
  // The request's own chain, else the conversation's (checked again: the server's settings may have changed).
  const fallbacks = checkFallbacks(services, {
    fallbacks: input.fallbacks ?? conversation.fallbacks ?? [],
    provider: conversation.provider,
    costLimit: costLimitOf(budget.max_cost_usd, config),
    field: input.fallbacks !== undefined ? "body.fallbacks" : "conversation.fallbacks",
  });
  const request: RunRequest = {
    max_steps: budget.max_steps,
    tool_choice: toolChoice,
    model: input.model ?? null,
    budget,
    finish,
    on_provider_outage: input.onProviderOutage ?? conversation.onProviderOutage,
    ...(fallbacks.length > 0 && { fallbacks }),
    ...(input.instructions != null && { instructions: input.instructions }),
    ...(input.maxOutputTokens != null && { max_output_tokens: input.maxOutputTokens }),
    // The version the conversation is pinned to: it cannot move while this run is open.
    ...(conversation.agentName !== null &&
      conversation.agentVersion !== null && {
        agent: { name: conversation.agentName, version: conversation.agentVersion },
      }),
  };
  const onBusy = input.prelude ? "reject" : (input.onBusy ?? "reject");
  if (input.webhook)
    await checkWebhookUrl(input.webhook.url, { config, field: "body.webhook.url", tenant: input.tenant });
  const webhook = input.webhook !== undefined ? input.webhook : conversation.webhook;
  // Last of the checks: attachments are stored once they all passed, and every other check before them.
  const content: UserBlock[] =
    typeof input.content === "string"
      ? [{ type: "text", text: input.content }]
      : await attachUserContent(
          { store, limits: config.attachments },
          { tenant: input.tenant, conversationId: conversation.id, blocks: input.content, fieldOf: input.contentField },
        ).catch((err: unknown) => {
          // A DELETE got in between the read above and the attachment's insert.
          throw isForeignKeyViolation(err) ? notFound("conversation", conversation.id) : err;
        });
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
    ...(input.onBusy && { on_busy: input.onBusy }),
    ...(input.webhook !== undefined && { webhook: input.webhook }),
    ...(input.onProviderOutage && { on_provider_outage: input.onProviderOutage }),
    ...(input.fallbacks !== undefined && { fallbacks: input.fallbacks }),
  });

  if (input.idempotencyKey) {
    const earlier = await store.runs.byIdempotencyKey(conversation.id, input.idempotencyKey);
    if (earlier) return replay(earlier, requestHash);
  }
  // After the replay: a retry of a run already accepted gets that run, not a refusal.
  const leftToday = await services.tenantCost.check(input.tenant);
  // A run spends no more than what is left of its tenant's day (runs in flight at once may together pass it, by at most what each was left).
  const admitted =
    leftToday === null || (budget.max_cost_usd !== null && budget.max_cost_usd <= leftToday)
      ? request
      : { ...request, budget: { ...budget, max_cost_usd: leftToday } };

  const toCreate: RunToCreate = {
    runId: newRunId(),
    tenant: input.tenant,
    conversation,
    content,
    request: admitted,
    requestHash,
    idempotencyKey: input.idempotencyKey,
    webhook,
    prelude: input.prelude,
  };
  for (let attempt = 1; ; attempt++) {
    try {
      // Only a conversation seen with an open run (or queued ones) needs the general path (a retry takes it).
      const atOnce =
        attempt === 1 && conversation.activeRunId === null ? await startRunAtOnce(services, toCreate) : null;
      const created = atOnce ?? (await createRunInTransaction(services, toCreate, onBusy));
      await afterCreated({ services, runs }, created);
      if ("position" in created)
        runs.start({
          kind: "created",
          run: created.run,
          position: created.position,
          conversation,
          appended: atOnce?.appended,
          committed: atOnce?.committed,
        });
      return { run: created.run, replayed: false };
    } catch (err) {
      // A DELETE got in between the read above and the insert: the run's conversation is gone.
      if (isForeignKeyViolation(err)) {
        throw notFound("conversation", conversation.id);
      }
      // Postgres broke a lock cycle by failing this side (a delete, an end at the same moment): nothing was written.
      if (isLockConflict(err) && attempt < 3) continue;
      const constraint = uniqueViolation(err);
      if (constraint === null) throw err;
      // Same key sent twice at once: the one that got in is the answer to both.
      const earlier = input.idempotencyKey
        ? await store.runs.byIdempotencyKey(conversation.id, input.idempotencyKey)
        : undefined;
      if (earlier) return replay(earlier, requestHash);
      if (constraint !== "runs_one_active_per_conversation_key") throw err;
      const active = await store.runs.activeOf(conversation.id);
      // The run in the way ended meanwhile, or it waits for the application and gives way, or this message may queue: try once more.
      if ((!active || onBusy !== "reject") && attempt < 3) continue;
      throw new AppError("conversation_busy", `conversation ${conversation.id} already has an active run`, {
        active_run_id: active?.id ?? null,
      });
    }
  }
}

/**
 * What a created run sets going besides itself: a paused run it superseded
 * is told; a run it interrupts is stopped (here, or in its process); a
 * queue with nothing running ahead is started.
 */
async function afterCreated(
  { services, runs }: { services: Services; runs: RunManager },
  created: CreatedRun,
): Promise<void> {
  if (created.superseded) {
    services.signals.notify(created.superseded.id);
    services.telemetry.runEnded(created.superseded);
  }
  if (!("queued" in created)) return;
  services.signals.notify(created.run.id);
  if (
    created.interrupts &&
    !runs.cancelLocal(created.interrupts, new Superseded("a new message interrupted the run"))
  ) {
    await services.store.notify("loopd_run_cancel", `${created.interrupts} superseded`);
  }
  const conversationId = created.run.conversationId;
  if (!created.behind) await runs.startQueued(conversationId);
  // The running run's process starts the queue when it ends (told here, or through the database).
  else if (!runs.noteQueued(created.behind, conversationId))
    await services.store.notify("loopd_run_queued", `${created.behind} ${conversationId}`);
}

/**
 * Admission control: while the process is overloaded (MAX_EVENT_LOOP_DELAY_MS,
 * sustained), or the database keeps statements waiting longer than
 * DB_ADMISSION_WAIT_MS, a new run is refused at once, so the runs already
 * accepted get the time and the connections they need to finish.
 */
export function admit({ store, config, overload }: Services): void {
  // 503 with Retry-After, as is the database's refusal below.
  if (overload.overloaded)
    throw new AppError(
      "unavailable",
      "the server is overloaded: new runs are refused until it recovers; try again shortly",
      { reason: "overloaded" },
    );
  const limit = config.database.admissionWaitMs;
  const waited = store.longestWaitMs();
  if (limit === 0 || waited <= limit) return;
  throw new AppError(
    "unavailable",
    `the database is busy: a statement has waited ${Math.round(waited)} ms for it, more than DB_ADMISSION_WAIT_MS (${limit} ms); try again shortly`,
    { reason: "database_busy" },
  );
}

const isForeignKeyViolation = (err: unknown): boolean =>
  findInCauseChain(err, (e) => ((e as { code?: unknown }).code === "23503" ? true : undefined)) === true;

function replay(earlier: RunRow, requestHash: string): { run: RunRow; replayed: boolean } {
  checkSameRequest(earlier.requestHash, requestHash, { run_id: earlier.id });
  return { run: earlier, replayed: true };
}
