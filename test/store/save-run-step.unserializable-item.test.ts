import { expect, test } from "vitest";
import { eq } from "drizzle-orm";
import { emptyUsage } from "../../src/core/usage.js";
import { createRunSaver, type RunSave } from "../../src/store/save-run-step.js";
import { messages } from "../../src/store/schema.js";
import { useTestStore } from "../support/helpers/use-test-store.js";

// Before the fix: saveRunSteps serializes the whole batch in one pgSafeJson call, in
// `many`. A value that only its own save cannot serialize (here: tool-call
// arguments a model nested deeper than JSON.stringify's recursion allows —
// JSON.parse reads them, JSON.stringify throws RangeError) makes `many` throw,
// and `grouped` rejects every save of the batch: other runs' saves fail with it.
// Alone (`one`), only the bad save fails.

const f = useTestStore();
const runningRun = (i: number) => f.runningRun(`rv_${i}`);

const saveOf = ({ runId, conversationId }: { runId: string; conversationId: string }, content: unknown): RunSave => ({
  runId,
  owner: "me",
  conversationId,
  firstSeq: 1,
  messages: [{ id: `msg_${runId}`, role: "assistant", content, event_seq: 1 }],
  events: [],
  progress: { steps: 1, usage: emptyUsage() },
});

test("one run's unserializable save does not fail the other saves of its batch", async () => {
  const [plug, victim, attacker] = await Promise.all([0, 1, 2].map(runningRun));
  // Arguments as a provider's JSON gives them: JSON.parse takes this depth, JSON.stringify does not.
  const depth = 200_000;
  const args = JSON.parse("[".repeat(depth) + "]".repeat(depth)) as unknown;
  expect(() => JSON.stringify(args)).toThrow(RangeError);
  const save = createRunSaver({ query: f.database.query, notifies: false, slots: 1 });
  const results = await Promise.allSettled([
    save(saveOf(plug!, [{ type: "text", text: "plug" }])),
    // These two wait for the plug's slot and go together.
    save(saveOf(victim!, [{ type: "text", text: "innocent" }])),
    save(saveOf(attacker!, [{ type: "tool_call", id: "c1", name: "x", arguments: args }])),
  ]);
  expect(results[0]!.status).toBe("fulfilled");
  expect(results[2]!.status).toBe("rejected");
  // Fails today: the victim's save is rejected with the attacker's RangeError.
  expect(results[1]).toMatchObject({ status: "fulfilled", value: expect.any(Date) });
  expect(
    (await f.database.db.select().from(messages).where(eq(messages.conversationId, victim!.conversationId))).length,
  ).toBe(1);
});
