import { and, asc, eq, gt, max } from "drizzle-orm";
import type { Db } from "./db.js";
import { toPgSafe } from "./pg-safe.js";
import { runEvents, type RunEventRow } from "./schema.js";

export interface NewRunEvent {
  seq: number;
  type: string;
  data: Record<string, unknown>;
}

export function createEventRepository({ db }: { db: Db }) {
  return {
    async append(runId: string, events: NewRunEvent[]): Promise<void> {
      if (events.length === 0) return;
      await db.insert(runEvents).values(events.map((e) => ({ runId, seq: e.seq, type: e.type, data: toPgSafe(e.data) })));
    },

    after({ runId, afterSeq, limit }: { runId: string; afterSeq: number; limit: number }): Promise<RunEventRow[]> {
      return db
        .select()
        .from(runEvents)
        .where(and(eq(runEvents.runId, runId), gt(runEvents.seq, afterSeq)))
        .orderBy(asc(runEvents.seq))
        .limit(limit);
    },

    async lastSeq(runId: string): Promise<number> {
      const [row] = await db.select({ last: max(runEvents.seq) }).from(runEvents).where(eq(runEvents.runId, runId));
      return row?.last ?? 0;
    },
  };
}

export type EventRepository = ReturnType<typeof createEventRepository>;
