import { sql } from "drizzle-orm";
import { describe, expect, it, vi } from "vitest";
import { createRunEventLog, type CommitParts } from "../../src/runs/run-event-log.js";
import { createRunSignals } from "../../src/runs/run-signals.js";
import { collected } from "../support/helpers/collect-garbage.js";
import { useTestStore } from "../support/helpers/use-test-store.js";

const s = useTestStore();

describe("a run's event log after the run's end", () => {
  it("hands the end to the run's readers for a while, and holds nothing else of the last write", async () => {
    const { runId, conversationId } = await s.runningRun("ended");
    const signals = createRunSignals();
    const log = createRunEventLog({
      store: s.store,
      signals,
      runId,
      conversationId,
      owner: "me",
      position: { lastSeq: 0, nextMessageSeq: 1 },
    });
    // The last write, made in a function of its own: nothing here holds it once it is committed.
    const lastWrite = await (async () => {
      const last: CommitParts = {
        messages: [{ role: "assistant", content: [{ type: "text", text: "the answer" }] }],
        end: { status: "completed", stopReason: "end_turn", error: null },
        events: (seq) => [{ type: "message.created", data: { seq } }],
      };
      await log.commit(last);
      return new WeakRef(last);
    })();

    // Readers still take the end from memory (for 10 s): the run's events from the first on.
    expect(signals.publishedAfter(runId, 0)?.map((e) => e.type)).toEqual(["message.created"]);
    // Held by the timer that forgets the end, it stayed, with the run's whole log around it, for those 10 s after every run.
    expect(await collected(lastWrite)).toBe(true);
  });

  it("forgets the end it handed to the readers 10 s after it, and not before", async () => {
    const { runId, conversationId } = await s.runningRun("forgotten");
    const signals = createRunSignals();
    const log = createRunEventLog({
      store: s.store,
      signals,
      runId,
      conversationId,
      owner: "me",
      position: { lastSeq: 0, nextMessageSeq: 1 },
    });
    vi.useFakeTimers({ toFake: ["setTimeout", "clearTimeout"] });
    try {
      await log.commit({
        messages: [{ role: "assistant", content: [{ type: "text", text: "the answer" }] }],
        end: { status: "completed", stopReason: "end_turn", error: null },
        events: (seq) => [{ type: "message.created", data: { seq } }],
      });
      vi.advanceTimersByTime(9_999);
      expect(signals.publishedAfter(runId, 0)).not.toBeNull();
      vi.advanceTimersByTime(1);
      // From now on its readers take the end from the database.
      expect(signals.publishedAfter(runId, 0)).toBeNull();
    } finally {
      vi.useRealTimers();
    }
  });
});

describe("a write held for the next (`soon`)", () => {
  const logOf = (runId: string, conversationId: string) =>
    createRunEventLog({
      store: s.store,
      signals: createRunSignals(),
      runId,
      conversationId,
      owner: "me",
      position: { lastSeq: 0, nextMessageSeq: 1 },
    });
  const answer: CommitParts["messages"] = [
    { role: "assistant", content: [{ type: "tool_call", id: "call_1", name: "peek", input: {} }] },
  ];
  const result: CommitParts["messages"] = [
    {
      role: "tool",
      content: [{ type: "tool_result", tool_call_id: "call_1", name: "peek", content: "seen", is_error: false }],
    },
  ];
  const announce = (count: number) => (seq: number) =>
    Array.from({ length: count }, (_, i) => ({ type: "message.created" as const, data: { seq: seq + i } }));
  const saved = async (conversationId: string) =>
    (
      (await s.database.db.execute(
        sql`select seq, role from messages where conversation_id = ${conversationId} order by seq`,
      )) as unknown as { rows: { seq: number; role: string }[] }
    ).rows.map((m) => [m.seq, m.role]);

  it("goes with the next write, first", async () => {
    const { runId, conversationId } = await s.runningRun("held");
    const log = logOf(runId, conversationId);
    await log.commit({ soon: true, messages: answer, events: announce(1) });
    expect(await saved(conversationId)).toEqual([]);
    await log.commit({ messages: result, events: announce(1) });
    expect(await saved(conversationId)).toEqual([
      [1, "assistant"],
      [2, "tool"],
    ]);
  });

  it("whose write failed goes again with the next: a result is never saved without the call it answers", async () => {
    const { runId, conversationId } = await s.runningRun("held-failed");
    const log = logOf(runId, conversationId);
    await log.commit({ soon: true, messages: answer, events: announce(1) });
    // Another writer's message where the held one goes: the write fails (the history does not end where the log thought).
    await s.store.messages.append({
      conversationId,
      runId: null,
      firstSeq: 1,
      items: [{ role: "user", content: [{ type: "text", text: "in the way" }] }],
    });
    await expect(log.commit({ messages: result, events: announce(1) })).rejects.toThrow(/does not end at seq/);
    await s.database.db.execute(sql`delete from messages where conversation_id = ${conversationId}`);
    await log.commit({ messages: result, events: announce(1) });
    expect(await saved(conversationId)).toEqual([
      [1, "assistant"],
      [2, "tool"],
    ]);
  });
});
