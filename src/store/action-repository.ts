import { and, desc, eq } from "drizzle-orm";
import type { Db } from "./db.js";
import { newId } from "./ids.js";
import { toPgSafe } from "./pg-safe.js";
import { runActions, type RunActionRow } from "./schema.js";

export type NewRunAction = Omit<typeof runActions.$inferInsert, "id" | "createdAt">;

/** The answers given to paused runs: the audit of who decided what, and the memory of idempotent retries. */
export function createActionRepository({ db }: { db: Db }) {
  return {
    async insert(action: NewRunAction): Promise<RunActionRow> {
      const [row] = await db
        .insert(runActions)
        .values({ id: newId("act"), ...action, answer: toPgSafe(action.answer) })
        .returning();
      return row!;
    },

    /** The run's last answer. */
    async latestOf(runId: string): Promise<RunActionRow | undefined> {
      const [row] = await db
        .select()
        .from(runActions)
        .where(eq(runActions.runId, runId))
        .orderBy(desc(runActions.createdAt), desc(runActions.id))
        .limit(1);
      return row;
    },

    async byIdempotencyKey(runId: string, key: string): Promise<RunActionRow | undefined> {
      const [row] = await db
        .select()
        .from(runActions)
        .where(and(eq(runActions.runId, runId), eq(runActions.idempotencyKey, key)));
      return row;
    },
  };
}
