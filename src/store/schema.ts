import { sql } from "drizzle-orm";
import { boolean, index, integer, jsonb, pgTable, primaryKey, text, timestamp, uniqueIndex } from "drizzle-orm/pg-core";
import type { AssistantBlock, TextBlock, ToolResultBlock, Usage } from "../agent/messages.js";

const createdAt = () => timestamp("created_at", { withTimezone: true, precision: 3 }).notNull().defaultNow();

export const conversations = pgTable(
  "conversations",
  {
    id: text("id").primaryKey(),
    createdAt: createdAt(),
    updatedAt: timestamp("updated_at", { withTimezone: true, precision: 3 }).notNull().defaultNow(),
    title: text("title"),
    system: text("system"),
    provider: text("provider").notNull(),
    model: text("model").notNull(),
    tools: jsonb("tools").$type<string[]>().notNull(),
    metadata: jsonb("metadata").$type<Record<string, unknown>>().notNull(),
  },
  (t) => [index("conversations_created_at_id_idx").on(t.createdAt.desc(), t.id.desc())],
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
    content: jsonb("content").$type<TextBlock[] | AssistantBlock[] | [ToolResultBlock]>().notNull(),
    runId: text("run_id"),
    createdAt: createdAt(),
  },
  (t) => [primaryKey({ name: "messages_pkey", columns: [t.conversationId, t.seq] })],
);

export interface RunError {
  code: string;
  message: string;
}

/** What the client asked for, kept so a resumed or replayed run uses the same settings. */
export interface RunRequest {
  max_steps: number;
  tool_choice: "auto" | "none" | "required" | { name: string };
  model: string | null;
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
    usage: jsonb("usage").$type<Usage>().notNull(),
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
    createdAt: createdAt(),
    completedAt: timestamp("completed_at", { withTimezone: true, precision: 3 }),
  },
  (t) => [
    index("runs_conversation_id_created_at_idx").on(t.conversationId, t.createdAt.desc(), t.id.desc()),
    // At most one active run per conversation, across every process sharing the database.
    uniqueIndex("runs_one_active_per_conversation_key")
      .on(t.conversationId)
      .where(sql`status in ('queued', 'running')`),
    uniqueIndex("runs_conversation_id_idempotency_key_key")
      .on(t.conversationId, t.idempotencyKey)
      .where(sql`idempotency_key is not null`),
    index("runs_active_lease_idx")
      .on(t.leaseExpiresAt)
      .where(sql`status in ('queued', 'running')`),
  ],
);

export const runEvents = pgTable(
  "run_events",
  {
    runId: text("run_id")
      .notNull()
      .references(() => runs.id, { onDelete: "cascade" }),
    seq: integer("seq").notNull(),
    type: text("type").notNull(),
    data: jsonb("data").$type<Record<string, unknown>>().notNull(),
    createdAt: createdAt(),
  },
  (t) => [primaryKey({ name: "run_events_pkey", columns: [t.runId, t.seq] })],
);

export const schema = { conversations, messages, runs, runEvents };

export type ConversationRow = typeof conversations.$inferSelect;
export type MessageRow = typeof messages.$inferSelect;
export type RunRow = typeof runs.$inferSelect;
export type RunEventRow = typeof runEvents.$inferSelect;
export type RunStatus = RunRow["status"];
export const ACTIVE_RUN_STATUSES = ["queued", "running"] as const satisfies readonly RunStatus[];
export const isActiveRun = (run: Pick<RunRow, "status">) => (ACTIVE_RUN_STATUSES as readonly RunStatus[]).includes(run.status);
