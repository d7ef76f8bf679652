import { and, asc, eq, gt, isNotNull, sql } from "drizzle-orm";
import type { Db } from "./db.js";
import { toPgSafe } from "./pg-safe.js";
import type { NewRunSpan } from "./save-run-step.js";
import { messages, runSpans, type MessageRow, type MessageSpan, type RunRow, type RunSpanRow } from "./schema.js";

/** A message of the run with the span that tells it. */
export type TracedMessage = Pick<MessageRow, "seq" | "role" | "content" | "createdAt"> & {
  span: MessageSpan;
};

/** One entry of a run's trace as stored: a row of `run_spans`, or a message with its `span`. */
export type TraceRow = { row: RunSpanRow; message?: never } | { message: TracedMessage; row?: never };

/** Where a page of the trace ends: the last `run_spans` row and the last message read so far. */
export interface TraceCursor {
  spanSeq: number;
  messageSeq: number;
}

export const TRACE_START: TraceCursor = { spanSeq: 0, messageSeq: 0 };

/**
 * A run's trace: the rows of `run_spans` (spans that tell no message) and
 * the `span` of each message the run saved. A run's own writes add them
 * through `runs.save`, with the step they tell; this appends the rows for
 * the few writes made outside it (an answer to a paused run, its end), in
 * the caller's transaction, and reads both back merged, in pages.
 */
export function createTraceRepository({ db }: { db: Db }) {
  return {
    /** Appends spans after the run's last one, before the span of message `nextMessageSeq` (the caller holds the run's row lock). */
    async append(runId: string, spans: NewRunSpan[], { nextMessageSeq }: { nextMessageSeq: number }): Promise<void> {
      if (spans.length === 0) return;
      const base = sql`(select coalesce(max(${runSpans.seq}), 0) from ${runSpans} where ${runSpans.runId} = ${runId})`;
      await db.insert(runSpans).values(
        spans.map((s, i) => ({
          runId,
          seq: sql`${base} + ${i + 1}`,
          type: s.type,
          data: toPgSafe(s.data),
          nextMessageSeq,
        })),
      );
    },

    /**
     * Up to `limit` entries after `after`, in order: a row of `run_spans`
     * comes after the spans of the messages before its `next_message_seq`
     * and before that message's. Each source is read along its primary key
     * (the messages from the run's first one on).
     */
    async page({
      run,
      after,
      limit,
    }: {
      run: Pick<RunRow, "id" | "conversationId" | "firstSeq">;
      after: TraceCursor;
      limit: number;
    }): Promise<TraceRow[]> {
      const rows = await db
        .select()
        .from(runSpans)
        .where(and(eq(runSpans.runId, run.id), gt(runSpans.seq, after.spanSeq)))
        .orderBy(asc(runSpans.seq))
        .limit(limit);
      const told = (await db
        .select({
          seq: messages.seq,
          role: messages.role,
          content: messages.content,
          createdAt: messages.createdAt,
          span: messages.span,
        })
        .from(messages)
        .where(
          and(
            eq(messages.conversationId, run.conversationId),
            gt(messages.seq, Math.max(after.messageSeq, (run.firstSeq ?? 1) - 1)),
            eq(messages.runId, run.id),
            isNotNull(messages.span),
          ),
        )
        .orderBy(asc(messages.seq))
        .limit(limit)) as TracedMessage[];
      // Each source came back in order and at most `limit` long: merged, their first `limit` entries are the page.
      const page: TraceRow[] = [];
      for (let i = 0, j = 0; page.length < limit && (i < rows.length || j < told.length);) {
        const row = rows[i];
        const message = told[j];
        if (row && (!message || row.nextMessageSeq <= message.seq)) {
          page.push({ row });
          i++;
        } else {
          page.push({ message: message! });
          j++;
        }
      }
      return page;
    },
  };
}

export type TraceRepository = ReturnType<typeof createTraceRepository>;
