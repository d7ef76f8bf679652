import { sql } from "drizzle-orm";
import {
  bigint,
  boolean,
  customType,
  index,
  integer,
  jsonb,
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
import type { AssistantBlock, Summarizes, ToolResultBlock, UserBlock } from "../core/messages.js";
import type { RunUsage } from "../core/usage.js";

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
    /**
     * Counts the changes to messages already written (a refused turn marked
     * `excluded`): a copy of the history kept in memory is the database's
     * only while its version is this one.
     */
    historyVersion: integer("history_version").notNull().default(0),
    /** The AI SDK chat id that names it on `/ui/chat` (null: none); a tenant's chat ids are unique. */
    chatId: text("chat_id"),
    /** Where its runs' ends are POSTed (a default for its runs; a message request may name its own); null: nowhere. */
    webhook: jsonb("webhook").$type<WebhookSetting>(),
    /** The conversation and message it was forked from (no reference: the original may be deleted). */
    forkedFrom: jsonb("forked_from").$type<{ conversation_id: string; seq: number }>(),
  },
  (t) => [
    // Lists are a tenant's, newest first.
    index("conversations_tenant_created_at_id_idx").on(t.tenantId, t.createdAt.desc(), t.id.desc()),
    uniqueIndex("conversations_tenant_chat_id_idx").on(t.tenantId, t.chatId),
  ],
);

/**
 * A conversation's history. `seq` is handed out by whoever appends (only the
 * conversation's one active run, or the request that creates it), so the
 * primary key is all the index a message needs.
 */
export const messages = pgTable(
  "messages",
  {
    /** The message's public id; unique by construction (80 random bits), not by an index. */
    id: text("id").notNull(),
    conversationId: text("conversation_id")
      .notNull()
      .references(() => conversations.id, { onDelete: "cascade" }),
    seq: integer("seq").notNull(),
    role: text("role").$type<"user" | "assistant" | "tool">().notNull(),
    content: jsonb("content").$type<UserBlock[] | AssistantBlock[] | [ToolResultBlock]>().notNull(),
    /**
     * The id of its `message.created` in its run's event log: the event is
     * this column, not a row of its own (one row less per message saved).
     * Null for messages saved without one (repairs, older rows).
     */
    eventSeq: integer("event_seq"),
    /** `refusal`: part of a turn the provider refused: kept, never sent to a model again. */
    excluded: text("excluded").$type<"refusal">(),
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
     * message saved). Null for messages without one (the user's, `TRACE=off`).
     */
    span: jsonb("span").$type<Record<string, unknown>>(),
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

/** What the client asked for, kept so a resumed or replayed run uses the same settings. */
export interface RunRequest {
  max_steps: number;
  tool_choice: "auto" | "none" | "required" | { name: string };
  model: string | null;
  /** The run's limits, settled when it was created (absent on runs made before budgets existed). */
  budget?: RunBudget;
  /** Set when the run is to end with a `finish` call. */
  finish?: FinishOptions | null;
}

export const runs = pgTable(
  "runs",
  {
    id: text("id").primaryKey(),
    conversationId: text("conversation_id")
      .notNull()
      .references(() => conversations.id, { onDelete: "cascade" }),
    status: text("status")
      .$type<"queued" | "running" | "requires_action" | "completed" | "incomplete" | "failed" | "cancelled">()
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
    createdAt: createdAt(),
    completedAt: timestamp("completed_at", { withTimezone: true, precision: 3 }),
  },
  (t) => [
    index("runs_conversation_id_created_at_idx").on(t.conversationId, t.createdAt.desc(), t.id.desc()),
    // At most one open run per conversation (executing, or paused on the
    // application), across every process sharing the database; queued ones wait behind it.
    uniqueIndex("runs_one_active_per_conversation_key")
      .on(t.conversationId)
      .where(sql`status in ('running', 'requires_action')`),
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
export type RunRow = typeof runs.$inferSelect;
export type RunEventRow = typeof runEvents.$inferSelect;
export type RunActionRow = typeof runActions.$inferSelect;
export type RunSpanRow = typeof runSpans.$inferSelect;
export type ApiKeyRow = typeof apiKeys.$inferSelect;
export type RunStatus = RunRow["status"];
/** Runs not over and not paused: queued or executing. */
export const ACTIVE_RUN_STATUSES = ["queued", "running"] as const satisfies readonly RunStatus[];
/** Runs that hold their conversation: executing, or waiting for the application (queued ones wait behind them). */
export const HOLDING_RUN_STATUSES = ["running", "requires_action"] as const satisfies readonly RunStatus[];
/** Runs not over: queued, executing, or waiting for the application. */
export const OPEN_RUN_STATUSES = ["queued", "running", "requires_action"] as const satisfies readonly RunStatus[];
export const isActiveRun = (run: Pick<RunRow, "status">) =>
  (ACTIVE_RUN_STATUSES as readonly RunStatus[]).includes(run.status);

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
};
