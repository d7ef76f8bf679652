import { sql } from "drizzle-orm";
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

    /**
     * The run's events after `afterSeq`, in order: its rows, and the
     * `message.created` of each message it saved, which is the message's own
     * `event_seq` (found from the run's first message on, along the
     * messages' primary key).
     */
    async after({ runId, afterSeq, limit }: { runId: string; afterSeq: number; limit: number }): Promise<RunEventRow[]> {
      const result = await db.execute(sql`
        select e.run_id, e.seq, e.type, e.data, e.created_at from run_events e where e.run_id = ${runId} and e.seq > ${afterSeq}
        union all
        select m.run_id, m.event_seq, 'message.created', jsonb_build_object('seq', m.seq), m.created_at
          from runs r join messages m on m.conversation_id = r.conversation_id and m.seq >= coalesce(r.first_seq, 0) and m.run_id = r.id
          where r.id = ${runId} and m.event_seq > ${afterSeq}
        order by 2 limit ${limit}`);
      return (result as unknown as { rows: RawEventRow[] }).rows.map(toEventRow);
    },

    async lastSeq(runId: string): Promise<number> {
      const result = await db.execute(sql`
        select greatest(
          (select max(e.seq) from run_events e where e.run_id = ${runId}),
          (select max(m.event_seq) from runs r join messages m on m.conversation_id = r.conversation_id and m.seq >= coalesce(r.first_seq, 0) and m.run_id = r.id where r.id = ${runId})
        ) as last`);
      const [row] = (result as unknown as { rows: { last: number | string | null }[] }).rows;
      return Number(row?.last ?? 0);
    },
  };
}

export type EventRepository = ReturnType<typeof createEventRepository>;

interface RawEventRow {
  run_id: string;
  seq: number;
  type: string;
  data: Record<string, unknown> | string;
  created_at: Date | string;
}

/** A row of the union as drivers return it (jsonb and timestamps parsed, or as text). */
const toEventRow = (r: RawEventRow): RunEventRow => ({
  runId: r.run_id,
  seq: Number(r.seq),
  type: r.type,
  data: typeof r.data === "string" ? (JSON.parse(r.data) as Record<string, unknown>) : r.data,
  createdAt: r.created_at instanceof Date ? r.created_at : new Date(r.created_at),
});
