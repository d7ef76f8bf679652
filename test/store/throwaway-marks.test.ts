import { expect, test } from "vitest";
import { createThrowawayKeeper } from "../../src/conversations/throwaway-keeper.js";
import { testDatabaseKind } from "../support/helpers/test-database.js";
import { usePostgresSession } from "../support/helpers/use-postgres-session.js";
import { useTestStore } from "../support/helpers/use-test-store.js";

const f = useTestStore();
const session = usePostgresSession(() => f.testDb.url);

test("throw-away marks: kept on for the ids that exist, however many are asked at once; only those past their time are overdue", async () => {
  const [held, lapsed, stored] = [await f.conversation(), await f.conversation("beta"), await f.conversation()];
  // More ids than one statement could take as parameters: those of conversations already deleted, mostly.
  const gone = Array.from({ length: 70_000 }, (_, i) => `conv_gone_${i}`);
  expect(await f.store.retention.keepThrowaways([...gone, held], 60_000)).toEqual([held]);
  expect(await f.store.retention.keepThrowaways([lapsed], -1_000)).toEqual([lapsed]);
  expect(await f.store.retention.overdueThrowaways(100)).toEqual([{ id: lapsed, tenantId: "beta" }]);
  // A conversation never marked (a stored one) is never overdue; the held one is not yet.
  const overdue = (await f.store.retention.overdueThrowaways(100)).map((c) => c.id);
  expect(overdue).not.toContain(stored);
  expect(overdue).not.toContain(held);
});

test("a sweep's delete of an overdue throw-away checks its time again under the row's lock: one renewed since it was read stays", async () => {
  const renewed = await f.conversation();
  await f.store.retention.keepThrowaways([renewed], -1_000);
  expect((await f.store.retention.overdueThrowaways(100)).map((c) => c.id)).toContain(renewed);
  // Its holder renews it between the sweeper's read and its delete.
  await f.store.retention.keepThrowaways([renewed], 60_000);
  expect(await f.store.conversations.delete("default", renewed, { overdue: true })).toBe(false);
  expect(await f.store.conversations.get("default", renewed)).toBeDefined();
  // Overdue still, it goes.
  await f.store.retention.keepThrowaways([renewed], -1_000);
  expect(await f.store.conversations.delete("default", renewed, { overdue: true })).toBe(true);
});

test.runIf(testDatabaseKind === "postgres")(
  "a throw-away held while a renewal runs stays held: the renewal's answer drops only the ids it asked about (found by review)",
  async () => {
    const [old, made] = [await f.conversation(), await f.conversation()];
    await f.store.retention.keepThrowaways([old, made], 60_000);
    const discarded: string[] = [];
    const keeper = createThrowawayKeeper(
      { store: f.store, log: { warn: () => {} } },
      { keepMs: 60_000, discard: async (_tenant, id) => (discarded.push(id), true) },
    );
    try {
      keeper.hold(old);
      // The renewal waits for the old one's row, held by another session.
      await session.db.query("begin");
      await session.db.query("select 1 from conversations where id = $1 for update", [old]);
      const renewal = keeper.renew();
      for (let i = 0; ; i++) {
        const waiting = await session.db.query(
          "select 1 from pg_stat_activity where wait_event_type = 'Lock' and pid <> pg_backend_pid()",
        );
        if (waiting.rows.length > 0) break;
        if (i > 400) throw new Error("the renewal never waited");
        await new Promise((resolve) => setTimeout(resolve, 10));
      }
      keeper.hold(made); // a store: false response made meanwhile
      await session.db.query("commit");
      await renewal;
      // Both overdue now, as if no process kept them: the sweep of their holder leaves both (an earlier test's goes).
      await f.store.retention.keepThrowaways([old, made], -1_000);
      await keeper.sweep();
      expect(discarded).not.toContain(old);
      expect(discarded).not.toContain(made);
    } finally {
      await keeper.close();
    }
  },
);
