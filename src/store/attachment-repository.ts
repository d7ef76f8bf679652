import { and, eq, getTableColumns, inArray, sql } from "drizzle-orm";
import { attachmentIdsOf, type AttachmentData, type NewMessage } from "../core/messages.js";
import type { Db } from "./db.js";
import { attachments, type AttachmentRow } from "./schema.js";
import { newId } from "./ids.js";

export type NewAttachment = Pick<
  AttachmentRow,
  "tenantId" | "conversationId" | "sha256" | "mediaType" | "width" | "height" | "data"
>;
/** An attachment without its bytes. */
export type AttachmentInfo = Omit<AttachmentRow, "data">;

// Every column but the bytes.
const { data: _bytes, ...infoColumns } = getTableColumns(attachments);

/*
 * The bytes go in and out as base64, encoded by the database: the embedded
 * database (in this process) takes ~1.1 s to bind a 5 MB bytea parameter
 * and ~0.4 s to return one, blocking the event loop, against ~0.2 s and
 * ~0.05 s as base64 text; a server spends the time in its own process.
 * Postgres breaks its base64 into lines of 76: the newlines are taken out
 * here (faster than in SQL on the embedded database).
 */
const fromBase64 = (data: Buffer) => sql<Buffer>`decode(${data.toString("base64")}, 'base64')`;
const base64Of = sql<string>`encode(${attachments.data}, 'base64')`.mapWith((v: string) => v.replaceAll("\n", ""));

/** The images and documents of conversations; every read is scoped by tenant. */
export function createAttachmentRepository({ db }: { db: Db }) {
  return {
    /** Stores the bytes once per conversation: the same bytes again give the row already there. */
    async save(attachment: NewAttachment): Promise<AttachmentInfo> {
      const [inserted] = await db
        .insert(attachments)
        .values({ ...attachment, id: newId("att"), bytes: attachment.data.length, data: fromBase64(attachment.data) })
        .onConflictDoNothing({ target: [attachments.conversationId, attachments.sha256] })
        .returning(infoColumns);
      if (inserted) return inserted;
      const [existing] = await db
        .select(infoColumns)
        .from(attachments)
        .where(
          and(
            eq(attachments.conversationId, attachment.conversationId),
            eq(attachments.sha256, attachment.sha256),
            eq(attachments.tenantId, attachment.tenantId),
          ),
        );
      if (!existing)
        throw new Error(`attachment ${attachment.sha256} of ${attachment.conversationId} neither inserted nor found`);
      return existing;
    },

    /** One attachment of the tenant's conversation, with its bytes; undefined when unknown or another's. */
    async get(tenant: string, conversationId: string, id: string): Promise<AttachmentRow | undefined> {
      const [row] = await db
        .select({ ...infoColumns, data: base64Of })
        .from(attachments)
        .where(
          and(eq(attachments.id, id), eq(attachments.conversationId, conversationId), eq(attachments.tenantId, tenant)),
        );
      return row && { ...row, data: Buffer.from(row.data, "base64") };
    },

    /**
     * The bytes of every attachment `history` refers to, as base64 by id,
     * read in one query (scoped by tenant) and encoded once: a run's calls,
     * or a request showing the history, share them.
     */
    async dataOf(tenant: string, history: readonly NewMessage[]): Promise<AttachmentData> {
      const ids = attachmentIdsOf(history);
      if (ids.size === 0) return new Map();
      // One row per id: a fork keeps a copy of each attachment under the same id (and a fork made before
      // 0015 refers to its original's), so the tenant may hold many; each copy's bytes read would be wasted.
      const one = db
        .selectDistinctOn([attachments.id], { ctid: sql`ctid` })
        .from(attachments)
        .where(and(inArray(attachments.id, [...ids]), eq(attachments.tenantId, tenant)));
      const rows = await db
        .select({ id: attachments.id, data: base64Of })
        .from(attachments)
        .where(sql`${attachments}.ctid in ${one}`);
      return new Map(rows.map((r) => [r.id, r.data]));
    },
  };
}
