import { customType, integer, pgTable, text, timestamp, uniqueIndex } from "drizzle-orm/pg-core";
import { conversations } from "./schema.js";

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
    id: text("id").primaryKey(),
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
  // Looked up by id (the primary key) or by conversation and hash (this index, which also keeps one row per bytes).
  (t) => [uniqueIndex("attachments_conversation_sha256_idx").on(t.conversationId, t.sha256)],
);

export type AttachmentRow = typeof attachments.$inferSelect;
