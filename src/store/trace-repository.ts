import { and, asc, eq, gt, sql } from "drizzle-orm";
import type { Db } from "./db.js";
import { toPgSafe } from "./pg-safe.js";
import type { NewRunSpan } from "./run-repository.js";
import { runSpans, type RunSpanRow } from "./schema.js";

/**
 * A run's trace (`run_spans`). A run's own writes add spans through
 * `runs.save`, with the step they tell; this appends them for the few
 * writes made outside it (an answer to a paused run), in the caller's
 * transaction, and reads them back in pages.
 */
export function createTraceRepository({ db }: { db: Db }) {
  return {
    /** Appends spans after the run's last one (the caller holds the run's row lock). */
    async append(runId: string, spans: NewRunSpan[]): Promise<void> {
      if (spans.length === 0) return;
      const base = sql`(select coalesce(max(${runSpans.seq}), 0) from ${runSpans} where ${runSpans.runId} = ${runId})`;
      await db.insert(runSpans).values(spans.map((s, i) => ({ runId, seq: sql`${base} + ${i + 1}`, type: s.type, data: toPgSafe(s.data) })));
    },

    /** Up to `limit` spans after `afterSeq`, in order (along the primary key). */
    page({ runId, afterSeq, limit }: { runId: string; afterSeq: number; limit: number }): Promise<RunSpanRow[]> {
      return db
        .select()
        .from(runSpans)
        .where(and(eq(runSpans.runId, runId), gt(runSpans.seq, afterSeq)))
        .orderBy(asc(runSpans.seq))
        .limit(limit);
    },
  };
}

export type TraceRepository = ReturnType<typeof createTraceRepository>;
