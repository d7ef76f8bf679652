import { sql } from "drizzle-orm";
import type { Database } from "../../../src/store/db.js";

export interface RowCounts {
  conversations: number;
  messages: number;
  runs: number;
  api_keys: number;
  attachments: number;
}

/** How many conversations, messages, runs, API keys and attachments are saved (one query): a rejected request must leave these as they were. */
export async function rowCounts({ db }: Database): Promise<RowCounts> {
  const result = await db.execute(
    sql`select (select count(*) from conversations)::int as conversations, (select count(*) from messages)::int as messages, (select count(*) from runs)::int as runs, (select count(*) from api_keys)::int as api_keys, (select count(*) from attachments)::int as attachments`,
  );
  const [row] = (result as unknown as { rows: RowCounts[] }).rows;
  return {
    conversations: row!.conversations,
    messages: row!.messages,
    runs: row!.runs,
    api_keys: row!.api_keys,
    attachments: row!.attachments,
  };
}
