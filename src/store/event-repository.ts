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

/** A message's own columns that are events of the run: its `message.created`, and a tool result's call's start and end. */
export interface MessageEvents {
  seq: number;
  /** A message's `message.created` is the message's own column (`event_seq`), not a row of `run_events`. */
  eventSeq: number | undefined;
  /** A tool result's `tool_call.started` and `tool_call.completed` (with the call's duration), when they go with it. */
  startedEventSeq?: number;
  completedEventSeq?: number;
  durationMs?: number;
}

/** A run (`r`) and the messages it saved (`m`), found from its first message on along the messages' primary key. */
const RUN_MESSAGES = sql.raw(
  "runs r join messages m on m.conversation_id = r.conversation_id and m.seq >= coalesce(r.first_seq, 0) and m.run_id = r.id",
);

/** A tool result's (`m`) call's input: from the nearest assistant message before it that made the call. */
const CALL_INPUT = sql.raw(`(select c->'input' from messages a cross join lateral jsonb_array_elements(a.content) c
  where a.conversation_id = m.conversation_id and a.seq < m.seq and a.role = 'assistant'
    and c->>'type' = 'tool_call' and c->>'id' = m.content->0->>'tool_call_id'
  order by a.seq desc limit 1)`);

export function createEventRepository({ db }: { db: Db }) {
  return {
    async append(runId: string, events: NewRunEvent[]): Promise<void> {
      if (events.length === 0) return;
      await db
        .insert(runEvents)
        .values(events.map((e) => ({ runId, seq: e.seq, type: e.type, data: toPgSafe(e.data) })));
    },

    /**
     * The run's events after `afterSeq`, in order: its rows, the
     * `message.created` of each message it saved, which is the message's own
     * `event_seq`, and the `tool_call.started` and `tool_call.completed` a
     * tool result carries (its columns; their data the result's call).
     * Each `message.created` carries its message, so a reader presents them
     * without a second round trip.
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
          from ${RUN_MESSAGES} where r.id = ${runId} and m.event_seq > ${afterSeq}
        union all
        select m.run_id, t.seq, t.type,
            case t.type
              when 'tool_call.completed' then jsonb_build_object('tool_call_id', m.content->0->'tool_call_id', 'name', m.content->0->'name',
                'is_error', m.content->0->'is_error', 'duration_ms', m.duration_ms, 'seq', m.seq)
              else jsonb_build_object('tool_call_id', m.content->0->'tool_call_id', 'name', m.content->0->'name', 'input', ${CALL_INPUT})
            end,
            m.created_at, null, null, null, null, null, null, null, null
          from ${RUN_MESSAGES}
            cross join lateral (values (m.started_event_seq, 'tool_call.started'), (m.completed_event_seq, 'tool_call.completed')) t(seq, type)
          where r.id = ${runId} and m.role = 'tool' and t.seq > ${afterSeq}
        order by 2 limit ${limit}`);
      return (result as unknown as { rows: RawEventRow[] }).rows.map(toEventRow);
    },

    async lastSeq(runId: string): Promise<number> {
      const result = await db.execute(sql`
        select greatest(
          (select max(e.seq) from run_events e where e.run_id = ${runId}),
          (select max(greatest(m.event_seq, m.started_event_seq, m.completed_event_seq)) from ${RUN_MESSAGES} where r.id = ${runId})
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
    // Not read: what a reader is handed of a tool result's events is those events.
    startedEventSeq: null,
    completedEventSeq: null,
    durationMs: null,
    excluded: r.m_excluded,
    kind: r.m_kind,
    summarizes: r.m_summarizes === null ? null : parsed(r.m_summarizes),
    runId: r.run_id,
    span: null,
    createdAt,
  };
  return row;
}
