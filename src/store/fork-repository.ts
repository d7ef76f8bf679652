import { sql } from "drizzle-orm";
import type { Db } from "./db.js";

/** What deciding a fork's point needs of each message: its role, and the tool calls it makes or answers. */
export interface MessageShape {
  seq: number;
  role: "user" | "assistant" | "tool";
  /** An assistant message's tool call ids; a tool message's one answered id. */
  callIds: string[];
}

/** Reads of a conversation's shape, and the copy of its first messages into a fork. */
export function createForkRepository({ db }: { db: Db }) {
  return {
    /** Every message up to `upTo`, as small rows: no content but the ids of calls. */
    async shapes(conversationId: string, upTo: number): Promise<MessageShape[]> {
      const result = (await db.execute(sql`
        select seq, role,
          case role
            when 'assistant' then jsonb_path_query_array(content, '$[*] ? (@.type == "tool_call").id')
            when 'tool' then jsonb_build_array(content->0->>'tool_call_id')
            else '[]'::jsonb end as call_ids
        from messages where conversation_id = ${conversationId} and seq <= ${upTo} order by seq`)) as unknown as {
        rows: { seq: number; role: MessageShape["role"]; call_ids: string[] | string | null }[];
      };
      return result.rows.map((r) => ({
        seq: Number(r.seq),
        role: r.role,
        callIds: typeof r.call_ids === "string" ? (JSON.parse(r.call_ids) as string[]) : (r.call_ids ?? []),
      }));
    },

    /**
     * Copies messages 1…`atSeq` of `from` into `to`: new ids, the same seqs,
     * contents and times; of no run. The attachments they refer to are
     * copied with them, under the same ids: the fork keeps its images when
     * the original is deleted.
     */
    async copyMessages(from: string, to: string, atSeq: number): Promise<void> {
      await db.execute(sql`
        insert into messages (id, conversation_id, seq, role, content, excluded, kind, summarizes, created_at)
        select 'msg_' || substr(md5(random()::text || clock_timestamp()::text || seq::text), 1, 25), ${to}, seq, role, content, excluded, kind, summarizes, created_at
        from messages where conversation_id = ${from} and seq <= ${atSeq}`);
      await db.execute(sql`
        insert into attachments (id, tenant_id, conversation_id, sha256, media_type, bytes, width, height, data, created_at)
        select a.id, a.tenant_id, ${to}, a.sha256, a.media_type, a.bytes, a.width, a.height, a.data, a.created_at
        from attachments a
        where a.conversation_id = ${from} and a.id in (
          select jsonb_path_query(m.content, 'strict $.**.attachment_id') #>> '{}'
          from messages m where m.conversation_id = ${to} and m.content::text like '%attachment_id%')`);
    },
  };
}
