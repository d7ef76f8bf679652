import { expect, test } from "vitest";
import pg from "pg";
import { emptyUsage } from "../../src/core/usage.js";
import { testDatabaseKind } from "../support/helpers/test-database.js";
import { useTestStore, waitingForLock } from "../support/helpers/use-test-store.js";

// Before the fix: loopd_start_runs takes each item's locks in conversation order, but
// with a tenant cap (MAX_ACTIVE_RUNS_PER_TENANT > 0) each item also takes its
// tenant's advisory lock (pg_advisory_xact_lock), held to the batch's commit.
// Two batches whose conversations interleave two tenants take the tenant locks
// in opposite orders: a deadlock (1 s of deadlock_timeout for both batches,
// then one item undone with 40P01). A single-statement start never held two.

const f = useTestStore();

const conv = async (tenantId: string) => {
  const id = await f.conversation(tenantId);
  await new Promise((r) => setTimeout(r, 5)); // ids are time-ordered
  return id;
};

const item = (conversationId: string, tenant: string, n: number) => ({
  run: {
    id: `run_dl${n}_${conversationId}`,
    conversation_id: conversationId,
    provider: "mock",
    model: "loopd-mock",
    usage: emptyUsage(),
    request: { max_steps: 3, tool_choice: "auto", model: null },
    idempotency_key: null,
    request_hash: "h",
    lease_owner: "me",
    webhook: null,
  },
  lease_ms: 60_000,
  tenant,
  cap: 100,
  message_id: `msg_dl${n}_${conversationId}`,
  content: [{ type: "text", text: "hi" }],
});

test.runIf(testDatabaseKind === "postgres")(
  "two batches of starts with a tenant cap never deadlock on the tenants' locks",
  async () => {
    // Conversation order: x1 < y1 < y2 < x2.
    const x1 = await conv("tenant_x");
    const y1 = await conv("tenant_y");
    const y2 = await conv("tenant_y");
    const x2 = await conv("tenant_x");
    expect([x1, y1, y2, x2]).toEqual([x1, y1, y2, x2].slice().sort());
    const clients = [0, 1, 2, 3].map(() => new pg.Client({ connectionString: f.testDb.url }));
    const [blocker, a, b, watcher] = clients as [pg.Client, pg.Client, pg.Client, pg.Client];
    await Promise.all(clients.map((c) => c.connect()));
    try {
      // Another transaction holds y2 and x2 for a moment (an interrupt, a queueing send, a delete).
      await blocker.query("begin");
      await blocker.query("select 1 from conversations where id in ($1, $2) for no key update", [y2, x2]);
      // Batch A (in conversation order, as createRunStarter sends it): x1 (tenant x), y2 (tenant y).
      const batchA = a.query("select loopd_start_runs($1::jsonb) as results", [
        JSON.stringify([item(x1, "tenant_x", 1), item(y2, "tenant_y", 2)]),
      ]);
      // Batch B: y1 (tenant y), x2 (tenant x).
      const batchB = b.query("select loopd_start_runs($1::jsonb) as results", [
        JSON.stringify([item(y1, "tenant_y", 3), item(x2, "tenant_x", 4)]),
      ]);
      await waitingForLock(watcher, "select loopd_start_runs", 2);
      await blocker.query("commit");
      const results = [...(await batchA).rows[0].results, ...(await batchB).rows[0].results];
      // Every start should succeed; today one of them is undone by a deadlock (code 40P01).
      expect(results.map((r: { code?: string }) => r.code ?? "started")).toEqual([
        "started",
        "started",
        "started",
        "started",
      ]);
    } finally {
      await Promise.all(clients.map((c) => c.end()));
    }
  },
);
