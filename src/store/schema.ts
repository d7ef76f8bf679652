import { sql } from "drizzle-orm";
import {
  bigint,
  boolean,
  customType,
  index,
  integer,
  jsonb,
  numeric,
  pgTable,
  primaryKey,
  text,
  timestamp,
  uniqueIndex,
} from "drizzle-orm/pg-core";
import type { RunBudget } from "../core/run-settings.js";
import type { RunResult } from "../core/run-outcome.js";
import type { FinishOptions } from "../core/run-settings.js";
import type { PendingToolCall } from "../core/run-outcome.js";
import type { ContextSettings } from "../core/context-settings.js";
import type { AssistantBlock, Exclusion, Summarizes, ToolResultBlock, UserBlock } from "../core/messages.js";
import type { RunUsage } from "../core/usage.js";
import type { ProviderName } from "../core/model-provider.js";

const createdAt = () => timestamp("created_at", { withTimezone: true, precision: 3 }).notNull().defaultNow();

export const conversations = pgTable(
  "conversations",
  {
    id: text("id").primaryKey(),
    /** Whose it is: the tenant of the key that created it (`default` when keys are off). Everything under it is reached through it. */
    tenantId: text("tenant_id").notNull().default("default"),
    createdAt: createdAt(),
    updatedAt: timestamp("updated_at", { withTimezone: true, precision: 3 }).notNull().defaultNow(),
    title: text("title"),
    system: text("system"),
    provider: text("provider").notNull(),
    model: text("model").notNull(),
    tools: jsonb("tools").$type<string[]>().notNull(),
    metadata: jsonb("metadata").$type<Record<string, unknown>>().notNull(),
    /** Tools whose calls wait for a person's yes. */
    approvalRequired: jsonb("approval_required").$type<string[]>().notNull().default([]),
    /** Tools the client executes: the model sees them, the server never runs them. */
    clientTools: jsonb("client_tools").$type<ClientTool[]>().notNull().default([]),
    /** How long a paused run waits for an answer; null: the server's `ACTION_TIMEOUT_S`. */
    actionTimeoutS: integer("action_timeout_s"),
    /** Budget defaults for its runs (a request's own budget wins, field by field). */
    budget: jsonb("budget").$type<BudgetInput>(),
    /** Its runs end with a `finish` call (a request may ask for it too). */
    finish: jsonb("finish").$type<FinishOptions>(),
    /** How each model call's context is built from the history; null: the whole history (`full`). */
    context: jsonb("context").$type<ContextSettings>(),
    /** Prompt caching (Anthropic breakpoints, OpenAI's cache key). */
    caching: boolean("caching").notNull().default(true),
    /** What its runs do when every model is down: fail, or wait it out (`waiting`); a message may say otherwise for its run. */
    onProviderOutage: text("on_provider_outage").$type<OnProviderOutage>().notNull().default("fail"),
    /**
     * Counts the changes to messages already written (a refused turn marked
     * `excluded`, an item deleted): a copy of the history kept in memory is the database's
     * only while its version is this one.
     */
    historyVersion: integer("history_version").notNull().default(0),
    /** The AI SDK chat id that names it on `/ui/chat` (null: none); a tenant's chat ids are unique. */
    chatId: text("chat_id"),
    /** Where its runs' ends are POSTed (a default for its runs; a message request may name its own); null: nowhere. */
    webhook: jsonb("webhook").$type<WebhookSetting>(),
    /** The conversation and message it was forked from (no reference: the original may be deleted). */
    forkedFrom: jsonb("forked_from").$type<{ conversation_id: string; seq: number }>(),
    /** The models its runs' steps go on with when its own cannot answer (provider settled); null: none. */
    fallbacks: jsonb("fallbacks").$type<ModelFallback[]>(),
    /**
     * The agent it was started from, and the version it is pinned to (null:
     * none). Its settings above are that version's configuration with
     * `agent_overrides` over it, worked out when it is pinned, so a run
     * reads them as any conversation's.
     */
    agentName: text("agent_name"),
    agentVersion: integer("agent_version"),
    /** The fields given beside the agent (at creation, or changed since): kept over every version it moves to. */
    agentOverrides: jsonb("agent_overrides").$type<Configuration>(),
    /** The agents its model may call as tools (`agent__<name>`), each run in a child conversation. */
    agents: jsonb("agents").$type<string[]>().notNull().default([]),
    /** A child agent's conversation: the run and call that started it (null: a conversation of its own). */
    parent: jsonb("parent").$type<ConversationParent>(),
    /**
     * A throw-away conversation's (a `store: false` response's): deleted once this time has passed. The process
     * that holds it pushes it on while it does; one killed leaves it to the others' sweep (null: kept).
     */
    discardAt: timestamp("discard_at", { withTimezone: true, precision: 3 }),
  },
  (t) => [
    index("conversations_discard_at_idx")
      .on(t.discardAt)
      .where(sql`${t.discardAt} is not null`),
    // Lists are a tenant's, newest first.
    index("conversations_tenant_created_at_id_idx").on(t.tenantId, t.createdAt.desc(), t.id.desc()),
    uniqueIndex("conversations_tenant_chat_id_idx").on(t.tenantId, t.chatId),
    // One child per call, whatever crashes and retries: a call run again finds its child here.
    uniqueIndex("conversations_parent_call_key")
      .on(sql`(${t.parent}->>'run_id')`, sql`(${t.parent}->>'tool_call_id')`)
      .where(sql`${t.parent} is not null`),
  ],
);

/**
 * A conversation's history. `seq` is handed out by whoever appends (only the
 * conversation's one active run, or the request that creates it), so the
 * primary key is all the index a message needs.
 */
/** What a message's `span` holds: the short form of the span that tells it (see src/runs/trace/message-span.ts). */
export type MessageSpan = Record<string, unknown> | unknown[] | string;

export const messages = pgTable(
  "messages",
  {
    /** The message's public id; unique by construction (80 random bits), not by an index. */
    id: text("id").notNull(),
    /**
     * No foreign key: its check would lock the conversation's row at every
     * save (a WAL record each). Every writer holds that row or its run's
     * row, which a delete of the conversation takes too, and the messages go
     * with the conversation (migration 0027's trigger), as a cascade did.
     */
    conversationId: text("conversation_id").notNull(),
    seq: integer("seq").notNull(),
    role: text("role").$type<"user" | "assistant" | "tool">().notNull(),
    content: jsonb("content").$type<UserBlock[] | AssistantBlock[] | [ToolResultBlock]>().notNull(),
    /**
     * The id of its `message.created` in its run's event log: the event is
     * this column, not a row of its own (one row less per message saved).
     * Null for messages saved without one (repairs, older rows).
     */
    eventSeq: integer("event_seq"),
    /**
     * A tool result's: the ids of its call's `tool_call.started` and
     * `tool_call.completed` when they were saved with it, and the call's
     * duration. Those events are these columns, not rows of `run_events`
     * (two rows and index entries less per tool step): read back, their data
     * is the result's call (its input from the assistant message before it).
     * Null where the events are rows (a call that ran longer than the
     * wait for the next write, older rows) or there are none.
     */
    startedEventSeq: integer("started_event_seq"),
    completedEventSeq: integer("completed_event_seq"),
    durationMs: integer("duration_ms"),
    /** `refusal`: part of a turn the provider refused; `deleted`: an item a client deleted (content emptied). Kept, never sent to a model again. */
    excluded: text("excluded").$type<Exclusion>(),
    /** A user-role message loopd wrote itself: `notice` (a budget's grace turn), `summary` (older messages condensed). */
    kind: text("kind").$type<"notice" | "summary">(),
    /** A summary's: the seqs of the messages it condenses. */
    summarizes: jsonb("summarizes").$type<Summarizes>(),
    runId: text("run_id"),
    /**
     * The trace span that tells this message (the `model.call` that answered
     * it, the `tool.call` whose result it holds, the `notice`), without what
     * the row itself holds (its seq, content, time): the span is this
     * column, not a row of `run_spans` (one tuple and index entry less per
     * message saved). Null for messages without one (the user's, `TRACE=off`);
     * an array's JSON text for a model or tool call (see src/runs/trace/message-span.ts).
     */
    span: jsonb("span").$type<MessageSpan>(),
    createdAt: createdAt(),
  },
  (t) => [primaryKey({ name: "messages_pkey", columns: [t.conversationId, t.seq] })],
);

/** A tool the client executes, as the model is told about it. */
export interface ClientTool {
  name: string;
  description: string;
  input_schema: Record<string, unknown>;
}

export type PendingCall = PendingToolCall;

/** Where a child agent's conversation was started: the run and the call (`agent__<name>`) that called it, and how deep (the top run is 1). */
export interface ConversationParent {
  conversation_id: string;
  run_id: string;
  tool_call_id: string;
  depth: number;
}

/** A child run a run's call started; `usage` once its end was added to the run's (so `/usage` counts it once). */
export interface RunChild {
  conversation_id: string;
  run_id: string;
  tool_call_id: string;
  usage?: RunUsage | undefined;
}

/**
 * A conversation's configuration as a client writes it, each field optional:
 * what an agent's version holds and what a conversation's `agent_overrides`
 * hold (the API's zod schema, `agentConfigurationFields`, is checked against it).
 */
export interface Configuration {
  system?: string | null | undefined;
  provider?: ProviderName | undefined;
  model?: string | undefined;
  tools?: string[] | undefined;
  metadata?: Record<string, unknown> | undefined;
  approval_required?: string[] | undefined;
  client_tools?: ClientTool[] | undefined;
  action_timeout_s?: number | null | undefined;
  budget?: BudgetInput | null | undefined;
  finish?: FinishOptions | null | undefined;
  context?: ContextSettings | null | undefined;
  caching?: boolean | undefined;
  on_provider_outage?: OnProviderOutage | undefined;
  webhook?: WebhookSetting | null | undefined;
  /** As given: a fallback without `provider` keeps the conversation's. */
  fallbacks?: Array<{ provider?: ProviderName | undefined; model: string }> | null | undefined;
  /** Agents its model may call as tools (`agent__<name>`). */
  agents?: string[] | undefined;
}

/** An agent's version as a run records it. */
export interface AgentRef {
  name: string;
  version: number;
}

/** The run events a webhook may be sent for. */
export const WEBHOOK_EVENTS = [
  "run.completed",
  "run.incomplete",
  "run.failed",
  "run.cancelled",
  "run.requires_action",
] as const;
export type WebhookEvent = (typeof WEBHOOK_EVENTS)[number];

/** Where a run's ends are POSTed, and which of them (absent: all). */
export interface WebhookSetting {
  url: string;
  events?: WebhookEvent[] | undefined;
}

/** What a paused run waits for; `expires_at` is the database's clock. */
export interface RequiredAction {
  tool_calls: PendingCall[];
  expires_at: string;
}

export interface RunError {
  code: string;
  message: string;
}

/** A budget as a client writes it: every field optional. */
export interface BudgetInput {
  max_steps?: number | undefined;
  max_tokens?: number | undefined;
  max_seconds?: number | undefined;
  max_cost_usd?: number | undefined;
  grace_turn?: boolean | undefined;
}

/** What a run does when every model is down: end `failed` (`provider_unavailable`), or park in `waiting` until a model answers. */
export type OnProviderOutage = "fail" | "wait";

/** What the client asked for, kept so a resumed or replayed run uses the same settings. */
export interface RunRequest {
  max_steps: number;
  tool_choice: "auto" | "none" | "required" | { name: string };
  model: string | null;
  /** The run's limits, settled when it was created (absent on runs made before budgets existed). */
  budget?: RunBudget;
  /** Set when the run is to end with a `finish` call. */
  finish?: FinishOptions | null;
  /** The message's, else its conversation's, when it was created (absent on runs made before: `fail`). */
  on_provider_outage?: OnProviderOutage;
  /** The models a step goes on with when the run's cannot answer, each with its provider settled (the request's, else the conversation's). */
  fallbacks?: ModelFallback[];
  /** The agent version its conversation was pinned to when it was created (absent: none). */
  agent?: AgentRef | null;
  /** Instructions for this run only, after the conversation's system prompt (`/v1/responses`' `instructions`). */
  instructions?: string | null;
  /** The most each model call of this run may write (below the server's `MAX_TOKENS`). */
  max_output_tokens?: number | null;
}

/** A model of a fallback chain, as stored: its provider always named. */
export interface ModelFallback {
  provider: string;
  model: string;
}

/** A model that answered steps of a run, and how many. */
export interface ModelUsed {
  provider: string;
  model: string;
  steps: number;
}

export const runs = pgTable(
  "runs",
  {
    id: text("id").primaryKey(),
    conversationId: text("conversation_id")
      .notNull()
      .references(() => conversations.id, { onDelete: "cascade" }),
    status: text("status")
      .$type<
        "queued" | "running" | "requires_action" | "waiting" | "completed" | "incomplete" | "failed" | "cancelled"
      >()
      .notNull(),
    stopReason: text("stop_reason"),
    steps: integer("steps").notNull().default(0),
    provider: text("provider").notNull(),
    model: text("model").notNull(),
    usage: jsonb("usage").$type<RunUsage>().notNull(),
    error: jsonb("error").$type<RunError>(),
    request: jsonb("request").$type<RunRequest>().notNull(),
    idempotencyKey: text("idempotency_key"),
    requestHash: text("request_hash"),
    /** The process that executes the run, and until when; an expired lease means the process died. */
    leaseOwner: text("lease_owner"),
    leaseExpiresAt: timestamp("lease_expires_at", { withTimezone: true, precision: 3 }),
    cancelRequested: boolean("cancel_requested").notNull().default(false),
    /** The `seq` of the message that started the run: the run's messages are the ones from there. */
    firstSeq: integer("first_seq"),
    /** While `requires_action`: the calls it waits on. */
    requiredAction: jsonb("required_action").$type<RequiredAction>(),
    /** While `requires_action`: when the pending calls are given up (the sweeper ends the run then). */
    actionExpiresAt: timestamp("action_expires_at", { withTimezone: true, precision: 3 }),
    /** While `requires_action`: since when. */
    pausedAt: timestamp("paused_at", { withTimezone: true, precision: 3 }),
    /** While `waiting` (every model down): when it is probed next, by whichever process claims it then. */
    wakeAt: timestamp("wake_at", { withTimezone: true, precision: 3 }),
    /** While `waiting`: when it stops waiting and ends `failed` (its `max_seconds`, else `MODEL_OUTAGE_MAX_WAIT_S` after `outage_since`). */
    giveUpAt: timestamp("give_up_at", { withTimezone: true, precision: 3 }),
    /** When it first parked in the outage it waits out (null once a model answered again). */
    outageSince: timestamp("outage_since", { withTimezone: true, precision: 3 }),
    /** How many times it parked in that outage: the wait doubles with each. */
    outageProbes: integer("outage_probes").notNull().default(0),
    /** Time spent paused, and queued before it started, which the run's time budget does not count. */
    pausedMs: integer("paused_ms").notNull().default(0),
    /** Which budget ended the run, when one did. */
    budgetExceeded: text("budget_exceeded").$type<"steps" | "tokens" | "seconds" | "cost">(),
    /** What a `finish` call reported (null when the run ended without one). */
    result: jsonb("result").$type<RunResult>(),
    /** Where this run's end is POSTed (the request's, else its conversation's, when it was created); null: nowhere. */
    webhook: jsonb("webhook").$type<WebhookSetting>(),
    /** While `queued`: the user message it starts with (saved when it starts, so the history stays valid). */
    queuedContent: jsonb("queued_content").$type<UserBlock[]>(),
    /** A queued run's place: runs of a conversation start by `queue_rank` (0: an interrupt, 1: enqueued), then `queue_order`. */
    queueRank: integer("queue_rank"),
    queueOrder: bigint("queue_order", { mode: "number" }),
    /** The run just ahead of it when it was queued (active or queued). */
    queuedBehind: text("queued_behind"),
    /** Why a cancel was asked: `superseded` when a new message interrupts the run; null: a client's cancel. */
    cancelReason: text("cancel_reason"),
    /** The models that answered its steps, when a fallback answered any; null: every step was the run's own model's. */
    modelsUsed: jsonb("models_used").$type<ModelUsed[]>(),
    /** The child runs its calls of agents started, in the order they started. */
    children: jsonb("children").$type<RunChild[]>().notNull().default([]),
    createdAt: createdAt(),
    completedAt: timestamp("completed_at", { withTimezone: true, precision: 3 }),
    /**
     * While it runs: its steps and usage so far, which read as `steps` and
     * `usage` (see run-columns.ts). Fixed-width and the row's last columns, so
     * a step's update logs the few bytes that changed, not the jsonb `usage`
     * and the columns between. The save that ends, pauses or parks it writes
     * `steps` and `usage` and sets them null again. Null: `steps` and `usage`
     * are its progress.
     */
    liveSteps: integer("live_steps"),
    liveInputTokens: bigint("live_input_tokens", { mode: "number" }),
    liveOutputTokens: bigint("live_output_tokens", { mode: "number" }),
    liveCacheReadTokens: bigint("live_cache_read_tokens", { mode: "number" }),
    liveCacheWriteTokens: bigint("live_cache_write_tokens", { mode: "number" }),
    liveCostUsd: numeric("live_cost_usd", { mode: "number" }),
  },
  (t) => [
    index("runs_conversation_id_created_at_idx").on(t.conversationId, t.createdAt.desc(), t.id.desc()),
    // At most one open run per conversation (executing, paused on the
    // application, or waiting out an outage), across every process sharing the database; queued ones wait behind it.
    uniqueIndex("runs_one_active_per_conversation_key")
      .on(t.conversationId)
      .where(sql`status in ('running', 'requires_action', 'waiting')`),
    index("runs_queued_idx")
      .on(t.conversationId, t.queueRank, t.queueOrder)
      .where(sql`status = 'queued'`),
    uniqueIndex("runs_conversation_id_idempotency_key_key")
      .on(t.conversationId, t.idempotencyKey)
      .where(sql`idempotency_key is not null`),
    index("runs_active_lease_idx")
      .on(t.leaseExpiresAt)
      .where(sql`status = 'running'`),
    index("runs_action_expires_at_idx")
      .on(t.actionExpiresAt)
      .where(sql`status = 'requires_action'`),
    // The waker's one statement per tick: empty (and so cheap) while nothing waits.
    index("runs_wake_at_idx")
      .on(t.wakeAt)
      .where(sql`status = 'waiting'`),
  ],
);

/** The columns of a run's numbered rows, appended as it goes: its events, and the spans of its trace that tell no message. */
const runLogColumns = () => ({
  runId: text("run_id")
    .notNull()
    .references(() => runs.id, { onDelete: "cascade" }),
  seq: integer("seq").notNull(),
  type: text("type").notNull(),
  data: jsonb("data").$type<Record<string, unknown>>().notNull(),
  createdAt: createdAt(),
});

export const runEvents = pgTable("run_events", runLogColumns(), (t) => [
  primaryKey({ name: "run_events_pkey", columns: [t.runId, t.seq] }),
]);

/**
 * The spans of a run's trace that tell no message (a model call's setup, a
 * failed or empty call, an answer, a recovery, a pause, the run's end),
 * numbered per run; the others are the `span` column of their message.
 * Append-only, written by the same `loopd_save` as the step it tells (see
 * src/runs/trace/run-tracer.ts for the shapes in `data`).
 */
export const runSpans = pgTable(
  "run_spans",
  {
    ...runLogColumns(),
    /**
     * The `seq` the conversation's next message had when the span was saved:
     * the span comes after the spans of the messages before that one, and
     * before that message's own (how the reader merges the two).
     */
    nextMessageSeq: integer("next_message_seq").notNull(),
  },
  (t) => [primaryKey({ name: "run_spans_pkey", columns: [t.runId, t.seq] })],
);

/**
 * Each answer to a paused run: who answered, what, and where its effects
 * start in the history and the event log (an idempotent retry answers from
 * there).
 */
export const runActions = pgTable(
  "run_actions",
  {
    id: text("id").primaryKey(),
    runId: text("run_id")
      .notNull()
      .references(() => runs.id, { onDelete: "cascade" }),
    actor: text("actor"),
    answer: jsonb("answer").$type<ActionAnswer>().notNull(),
    idempotencyKey: text("idempotency_key"),
    requestHash: text("request_hash").notNull(),
    /** The run's last event before the answer's. */
    afterEventSeq: integer("after_event_seq").notNull(),
    /** The `seq` of the first message the answer's run appended from then on. */
    firstMessageSeq: integer("first_message_seq").notNull(),
    createdAt: createdAt(),
  },
  (t) => [
    index("run_actions_run_id_idx").on(t.runId),
    uniqueIndex("run_actions_run_id_idempotency_key_key")
      .on(t.runId, t.idempotencyKey)
      .where(sql`idempotency_key is not null`),
  ],
);

/** The decisions of one answer, as stored for audit. */
export interface ActionAnswer {
  approvals: { tool_call_id: string; approve: boolean; reason?: string | undefined }[];
  tool_outputs: { tool_call_id: string; is_error: boolean }[];
}

/**
 * API keys: each one a tenant's. Only the SHA-256 of a key is kept; the key
 * itself is shown once, when it is made.
 */
export const apiKeys = pgTable(
  "api_keys",
  {
    id: text("id").primaryKey(),
    tenantId: text("tenant_id").notNull(),
    name: text("name"),
    /** Hex SHA-256 of the key. */
    keyHash: text("key_hash").notNull(),
    createdAt: createdAt(),
    /** Updated at most about once a minute per key, not on every request. */
    lastUsedAt: timestamp("last_used_at", { withTimezone: true, precision: 3 }),
    revokedAt: timestamp("revoked_at", { withTimezone: true, precision: 3 }),
  },
  (t) => [uniqueIndex("api_keys_key_hash_key").on(t.keyHash), index("api_keys_tenant_id_idx").on(t.tenantId)],
);

export type ConversationRow = typeof conversations.$inferSelect;
export type MessageRow = typeof messages.$inferSelect;
/** A run as read (`runColumns`, run-columns.ts): its live progress is its `steps` and `usage`. */
export type RunRow = Omit<typeof runs.$inferSelect, LiveProgressColumn>;
export type LiveProgressColumn =
  "liveSteps" | "liveInputTokens" | "liveOutputTokens" | "liveCacheReadTokens" | "liveCacheWriteTokens" | "liveCostUsd";
export type RunEventRow = typeof runEvents.$inferSelect;
export type RunActionRow = typeof runActions.$inferSelect;
export type RunSpanRow = typeof runSpans.$inferSelect;
export type ApiKeyRow = typeof apiKeys.$inferSelect;
export type RunStatus = RunRow["status"];
/** Runs not over and not paused: queued or executing. */
export const ACTIVE_RUN_STATUSES = ["queued", "running"] as const satisfies readonly RunStatus[];
/** Runs that hold their conversation: executing, waiting for the application or out an outage (queued ones wait behind them). */
export const HOLDING_RUN_STATUSES = ["running", "requires_action", "waiting"] as const satisfies readonly RunStatus[];
/** Runs not over: queued, executing, waiting for the application or out an outage. */
export const OPEN_RUN_STATUSES = [
  "queued",
  "running",
  "requires_action",
  "waiting",
] as const satisfies readonly RunStatus[];
export const isActiveRun = (run: Pick<RunRow, "status">) =>
  (ACTIVE_RUN_STATUSES as readonly RunStatus[]).includes(run.status);
/** Whether a run is over: nothing more happens to it. */
export const isOverRun = (run: Pick<RunRow, "status">) =>
  !(OPEN_RUN_STATUSES as readonly RunStatus[]).includes(run.status);

/** One try at POSTing a webhook: when, the receiver's status (null: no answer), and what went wrong (null: a 2xx). */
export interface WebhookAttempt {
  at: string;
  status_code: number | null;
  error: string | null;
}

/**
 * The outbox of run webhooks: a row per run end (or pause) to POST, written
 * by a trigger on `runs` in the transaction that ends the run (migration
 * 0012), so a crash never loses one; delivered and retried by
 * src/webhooks/webhook-worker.ts on any instance.
 */
export const webhookDeliveries = pgTable(
  "webhook_deliveries",
  {
    /** The `webhook-id` header: `<run_id>.<type>` (a run's later pauses: `<run_id>.run.requires_action.<n>`), the same on every retry. */
    id: text("id").primaryKey(),
    runId: text("run_id")
      .notNull()
      .references(() => runs.id, { onDelete: "cascade" }),
    type: text("type").$type<WebhookEvent>().notNull(),
    url: text("url").notNull(),
    /** The run's row as it was at that end, `to_jsonb` of it (what the body's `data.run` shows). */
    run: jsonb("run").$type<Record<string, unknown>>().notNull(),
    status: text("status").$type<"pending" | "delivered" | "failed">().notNull().default("pending"),
    /** Oldest first; at most `WEBHOOK_MAX_ATTEMPTS` of them, so a small array rather than rows of their own. */
    attempts: jsonb("attempts").$type<WebhookAttempt[]>().notNull().default([]),
    /** While pending: when it is next tried (or when the claim of the instance trying it runs out). */
    nextAttemptAt: timestamp("next_attempt_at", { withTimezone: true, precision: 3 }).notNull().defaultNow(),
    /** When the run ended (or paused): the body's `timestamp`. */
    createdAt: createdAt(),
  },
  (t) => [
    index("webhook_deliveries_run_id_idx").on(t.runId, t.createdAt),
    index("webhook_deliveries_pending_idx")
      .on(t.nextAttemptAt)
      .where(sql`status = 'pending'`),
  ],
);

export type WebhookDeliveryRow = typeof webhookDeliveries.$inferSelect;

/**
 * Each tenant's webhook secret generations: generation 0 needs no row; a
 * rotate adds the next. Nothing secret is kept: a generation's secret is
 * derived from `WEBHOOK_SECRET` (src/webhooks/tenant-webhook-secret.ts);
 * `created_at` says until when the one it replaced still signs (24 h on).
 */
export const webhookSecrets = pgTable(
  "webhook_secrets",
  {
    tenantId: text("tenant_id").notNull(),
    generation: integer("generation").notNull(),
    createdAt: createdAt(),
  },
  (t) => [primaryKey({ name: "webhook_secrets_pkey", columns: [t.tenantId, t.generation] })],
);

/** Bytes as Postgres keeps them: `pg` reads a Buffer, PGlite a Uint8Array; both come out a Buffer. */
const bytea = customType<{ data: Buffer; driverData: Uint8Array }>({
  dataType: () => "bytea",
  fromDriver: (v) => (Buffer.isBuffer(v) ? v : Buffer.from(v.buffer, v.byteOffset, v.byteLength)),
});

/**
 * The images and documents users sent, each stored once per conversation
 * (by its SHA-256) and referred to by messages as `attachment_id`. Rows go
 * with their conversation.
 */
export const attachments = pgTable(
  "attachments",
  {
    /** Unique within its conversation; a fork's copy keeps the original's id (its messages refer to it). */
    id: text("id").notNull(),
    tenantId: text("tenant_id").notNull(),
    conversationId: text("conversation_id")
      .notNull()
      .references(() => conversations.id, { onDelete: "cascade" }),
    /** Hex SHA-256 of `data`. */
    sha256: text("sha256").notNull(),
    mediaType: text("media_type").notNull(),
    bytes: integer("bytes").notNull(),
    /** An image's size in pixels; null for a document. */
    width: integer("width"),
    height: integer("height"),
    data: bytea("data").notNull(),
    createdAt: timestamp("created_at", { withTimezone: true, precision: 3 }).notNull().defaultNow(),
  },
  // Looked up by conversation and id (the primary key), by the ids a history refers to, or by conversation and hash (which also keeps one row per bytes).
  (t) => [
    primaryKey({ name: "attachments_pkey", columns: [t.conversationId, t.id] }),
    index("attachments_id_idx").on(t.id),
    uniqueIndex("attachments_conversation_sha256_idx").on(t.conversationId, t.sha256),
  ],
);

export type AttachmentRow = typeof attachments.$inferSelect;

/**
 * Named agents: a configuration conversations start from, versioned. The
 * row is the agent; its versions are `agent_versions`, never changed once
 * written. `version` is the latest, the one a `PATCH` must name (a change
 * moves it on only from the version the client saw).
 */
export const agents = pgTable(
  "agents",
  {
    /** `agt_…`, the same in every version. */
    id: text("id").primaryKey(),
    tenantId: text("tenant_id").notNull(),
    /** 1–48 of [a-z0-9_-]; a tenant's names are unique, archived ones too. */
    name: text("name").notNull(),
    version: integer("version").notNull(),
    /** New conversations from it are refused from then on. */
    archivedAt: timestamp("archived_at", { withTimezone: true, precision: 3 }),
    /** Written by `AGENTS_FILE` at start: read-only over HTTP. */
    fromFile: boolean("from_file").notNull().default(false),
    createdAt: createdAt(),
    updatedAt: timestamp("updated_at", { withTimezone: true, precision: 3 }).notNull().defaultNow(),
  },
  (t) => [
    uniqueIndex("agents_tenant_name_key").on(t.tenantId, t.name),
    // Lists are a tenant's, newest first.
    index("agents_tenant_created_at_id_idx").on(t.tenantId, t.createdAt.desc(), t.id.desc()),
  ],
);

/** Each version of an agent, as it was written. */
export const agentVersions = pgTable(
  "agent_versions",
  {
    agentId: text("agent_id")
      .notNull()
      .references(() => agents.id, { onDelete: "cascade" }),
    version: integer("version").notNull(),
    description: text("description"),
    configuration: jsonb("configuration").$type<Configuration>().notNull(),
    createdAt: createdAt(),
  },
  (t) => [primaryKey({ name: "agent_versions_pkey", columns: [t.agentId, t.version] })],
);

export type AgentRow = typeof agents.$inferSelect;
export type AgentVersionRow = typeof agentVersions.$inferSelect;

/**
 * The per-key rate limit's current window (`RATE_LIMIT_PER_MIN`), counted
 * here so that every instance on the database counts the same requests: a
 * key gets its limit, not its limit at each instance.
 */
export const rateLimitWindows = pgTable("rate_limit_windows", {
  keyId: text("key_id").primaryKey(),
  startedAt: timestamp("started_at", { withTimezone: true, precision: 3 }).notNull(),
  hits: integer("hits").notNull(),
});

/**
 * The SSE streams each instance holds open per tenant, published every
 * second or so, so that a tenant's share (`MAX_STREAMS_PER_TENANT`) counts
 * its streams on every instance; an instance that stops publishing drops out
 * after a few seconds.
 */
export const openStreams = pgTable(
  "open_streams",
  {
    instanceId: text("instance_id").notNull(),
    tenantId: text("tenant_id").notNull(),
    streams: integer("streams").notNull(),
    seenAt: timestamp("seen_at", { withTimezone: true, precision: 3 }).notNull(),
  },
  (t) => [primaryKey({ name: "open_streams_pkey", columns: [t.instanceId, t.tenantId] })],
);

/**
 * A response of the OpenAI-compatible `/v1/responses`: a stretch of one of
 * loopd's runs, from `after_event` (the run's last event before it: 0 for a
 * run it started; the pause it answered otherwise) to the run's next end or
 * pause. Its output is worked out from the run's messages from `from_seq`.
 */
export const openaiResponses = pgTable(
  "openai_responses",
  {
    id: text("id").primaryKey(),
    tenantId: text("tenant_id").notNull(),
    conversationId: text("conversation_id")
      .notNull()
      .references(() => conversations.id, { onDelete: "cascade" }),
    runId: text("run_id").notNull(),
    afterEvent: integer("after_event").notNull().default(0),
    /** The seq of its first message (the user's, or the first answer's); null while its run is queued. */
    fromSeq: integer("from_seq"),
    previousResponseId: text("previous_response_id"),
    background: boolean("background").notNull().default(false),
    /** What the request asked for, echoed in the response (model, instructions, tools, sampling …). */
    request: jsonb("request").$type<Record<string, unknown>>().notNull(),
    createdAt: createdAt(),
  },
  (t) => [
    index("openai_responses_conversation_created_at_idx").on(t.conversationId, t.createdAt.desc()),
    index("openai_responses_run_id_idx").on(t.runId),
  ],
);

export type OpenaiResponseRow = typeof openaiResponses.$inferSelect;

/**
 * Keys loopd made for itself, one per name, shared by every process on the
 * database: `responses_compact`, what seals `/v1/responses/compact`'s
 * `encrypted_content` when `RESPONSES_COMPACT_KEY` is unset. The first
 * process that needs one inserts it; the others read that one.
 */
export const serverKeys = pgTable("server_keys", {
  name: text("name").primaryKey(),
  key: bytea("key").notNull(),
  createdAt: createdAt(),
});

export const schema = {
  conversations,
  messages,
  runs,
  runEvents,
  runActions,
  runSpans,
  apiKeys,
  webhookDeliveries,
  attachments,
  webhookSecrets,
  agents,
  agentVersions,
  rateLimitWindows,
  openStreams,
  openaiResponses,
  serverKeys,
};
