import { count } from "drizzle-orm";
import type { Database } from "../../src/store/db.js";
import { conversations, messages, runs } from "../../src/store/schema.js";

/** How many conversations, messages and runs are saved: a rejected request must leave these as they were. */
export async function rowCounts({ db }: Database): Promise<{ conversations: number; messages: number; runs: number }> {
  const [[c], [m], [r]] = await Promise.all([
    db.select({ n: count() }).from(conversations),
    db.select({ n: count() }).from(messages),
    db.select({ n: count() }).from(runs),
  ]);
  return { conversations: c!.n, messages: m!.n, runs: r!.n };
}
