import { sql } from "drizzle-orm";
import type { Db } from "./db.js";
import { toPgSafe } from "./pg-safe.js";
import { runEvents, type MessageRow, type RunEventRow } from "./schema.js";

/** A stored event; a `message.created` comes with its message, read in the same statement. */
export type LoggedEvent = RunEventRow & { message?: MessageRow };

export interface NewRunEvent {
  seq: number;
  type: string;
  data: Record<string, unknown>;
}

export function createEventRepository({ db }: { db: Db }) {
  return {
    async append(runId: string, events: NewRunEvent[]): Promise<void> {
      if (events.length === 0) return;
      await db
        .insert(runEvents)
        .values(events.map((e) => ({ runId, seq: e.seq, type: e.type, data: toPgSafe(e.data) })));
    },

    /**
     * The run's events after `afterSeq`, in order: its rows, and the
     * `message.created` of each message it saved, which is the message's own
     * `event_seq` (found from the run's first message on, along the
     * messages' primary key). Each `message.created` carries its message,
     * so a reader presents them without a second round trip.
     */
    async after({
      runId,
      afterSeq,
      limit,
    }: {
      runId: string;
      afterSeq: number;
      limit: number;
    }): Promise<LoggedEvent[]> {
      const result = await db.execute(sql`
        select e.run_id, e.seq, e.type, e.data, e.created_at, null::text as m_id, null::integer as m_seq, null::text as m_conversation_id,
            null::text as m_role, null::jsonb as m_content, null::text as m_kind, null::jsonb as m_summarizes, null::text as m_excluded
          from run_events e where e.run_id = ${runId} and e.seq > ${afterSeq}
        union all
        select m.run_id, m.event_seq, 'message.created', jsonb_build_object('seq', m.seq), m.created_at, m.id, m.seq, m.conversation_id,
            m.role, m.content, m.kind, m.summarizes, m.excluded
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
  m_id: string | null;
  m_seq: number | null;
  m_conversation_id: string | null;
  m_role: MessageRow["role"] | null;
  m_content: MessageRow["content"] | string | null;
  m_kind: MessageRow["kind"];
  m_summarizes: MessageRow["summarizes"] | string;
  m_excluded: MessageRow["excluded"];
}

const parsed = <T>(value: T | string): T => (typeof value === "string" ? (JSON.parse(value) as T) : value);

/** A row of the union as drivers return it (jsonb and timestamps parsed, or as text). */
function toEventRow(r: RawEventRow): LoggedEvent {
  const createdAt = r.created_at instanceof Date ? r.created_at : new Date(r.created_at);
  const row: LoggedEvent = { runId: r.run_id, seq: Number(r.seq), type: r.type, data: parsed(r.data), createdAt };
  if (r.m_id === null) return row;
  // Only what presenting a message reads: the trace's span stays in the database.
  row.message = {
    id: r.m_id,
    conversationId: r.m_conversation_id!,
    seq: Number(r.m_seq),
    role: r.m_role!,
    content: parsed(r.m_content!),
    eventSeq: row.seq,
    excluded: r.m_excluded,
    kind: r.m_kind,
    summarizes: r.m_summarizes === null ? null : parsed(r.m_summarizes),
    runId: r.run_id,
    span: null,
    createdAt,
  };
  return row;
}
