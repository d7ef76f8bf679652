import { and, asc, eq, gt, or } from "drizzle-orm";
import type { Db } from "./db.js";
import { openaiResponses, type OpenaiResponseRow } from "./schema.js";

/** The responses of `/v1/responses`, each a stretch of a run; every read a tenant's. */
export function createOpenaiResponseRepository({ db }: { db: Db }) {
  return {
    async insert(row: typeof openaiResponses.$inferInsert): Promise<OpenaiResponseRow> {
      const [inserted] = await db.insert(openaiResponses).values(row).returning();
      return inserted!;
    },

    async get(tenant: string, id: string): Promise<OpenaiResponseRow | undefined> {
      const [row] = await db
        .select()
        .from(openaiResponses)
        .where(and(eq(openaiResponses.tenantId, tenant), eq(openaiResponses.id, id)));
      return row;
    },

    /** The response made after `row` in its conversation (none: `row` is its latest). */
    async nextInConversation(row: Pick<OpenaiResponseRow, "conversationId" | "createdAt" | "id">) {
      const [next] = await db
        .select()
        .from(openaiResponses)
        .where(
          and(
            eq(openaiResponses.conversationId, row.conversationId),
            or(
              gt(openaiResponses.createdAt, row.createdAt),
              and(eq(openaiResponses.createdAt, row.createdAt), gt(openaiResponses.id, row.id)),
            ),
          ),
        )
        .orderBy(asc(openaiResponses.createdAt), asc(openaiResponses.id))
        .limit(1);
      return next;
    },

    /** The response that went on with the same run after `afterEvent` (it answered the pause this one ended with). */
    async nextOfRun(runId: string, afterEvent: number): Promise<OpenaiResponseRow | undefined> {
      const [row] = await db
        .select()
        .from(openaiResponses)
        .where(and(eq(openaiResponses.runId, runId), gt(openaiResponses.afterEvent, afterEvent)))
        .orderBy(asc(openaiResponses.afterEvent))
        .limit(1);
      return row;
    },
  };
}

export type OpenaiResponseRepository = ReturnType<typeof createOpenaiResponseRepository>;
