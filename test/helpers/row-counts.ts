import { sql } from "drizzle-orm";
import type { Database } from "../../src/store/db.js";

export interface RowCounts {
  conversations: number;
  messages: number;
  runs: number;
}

/** How many conversations, messages and runs are saved (one query): a rejected request must leave these as they were. */
export async function rowCounts({ db }: Database): Promise<RowCounts> {
  const result = await db.execute(
    sql`select (select count(*) from conversations)::int as conversations, (select count(*) from messages)::int as messages, (select count(*) from runs)::int as runs`,
  );
  const [row] = (result as unknown as { rows: RowCounts[] }).rows;
  return { conversations: row!.conversations, messages: row!.messages, runs: row!.runs };
}
