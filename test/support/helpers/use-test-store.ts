import type pg from "pg";
import { afterAll, beforeAll } from "vitest";
import { emptyUsage } from "../../../src/core/usage.js";
import type { Database } from "../../../src/store/db.js";
import { createStore, type Store } from "../../../src/store/store.js";
import { createTestDatabase, type TestDatabase } from "./test-database.js";

/** A test file's own database and store (opened before its tests, dropped after), and what store-level tests make with it. */
export function useTestStore() {
  const f = {} as { testDb: TestDatabase; database: Database; store: Store };
  beforeAll(async () => {
    f.testDb = await createTestDatabase();
    f.database = await f.testDb.open();
    f.store = createStore(f.database);
  });
  afterAll(async () => {
    await f.database.close();
    await f.testDb.drop();
  });
  return Object.assign(f, {
    /** A conversation of `tenantId`'s. */
    async conversation(tenantId = "default"): Promise<string> {
      return (
        await f.store.conversations.create({
          tenantId,
          provider: "mock",
          model: "loopd-mock",
          tools: [],
          metadata: {},
          title: null,
          system: null,
        })
      ).id;
    },
    /** A run executing on a conversation of its own, its lease held by "me". */
    async runningRun(name: string): Promise<{ runId: string; conversationId: string }> {
      const conversationId = await this.conversation();
      const runId = `run_${name}_${conversationId}`;
      await f.store.runs.insert({
        id: runId,
        conversationId,
        status: "running",
        provider: "mock",
        model: "loopd-mock",
        usage: emptyUsage(),
        request: { max_steps: 3, tool_choice: "auto", model: null },
        leaseOwner: "me",
        leaseMs: 60_000,
      });
      return { runId, conversationId };
    },
  });
}

/** Resolves once `count` statements starting with `text` wait for a lock (Postgres). */
export async function waitingForLock(client: pg.Client, text: string, count = 1): Promise<void> {
  for (;;) {
    const { rows } = await client.query(
      "select count(*)::int as n from pg_stat_activity where wait_event_type = 'Lock' and query like $1",
      [`${text}%`],
    );
    if (rows[0].n >= count) return;
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}
