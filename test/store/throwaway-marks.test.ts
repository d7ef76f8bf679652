import { expect, test } from "vitest";
import { useTestStore } from "../support/helpers/use-test-store.js";

const f = useTestStore();

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
