import { expect, test } from "vitest";
import type { NewMessage } from "../../src/core/messages.js";
import { repairTail } from "../../src/core/history.js";
import { emptyUsage } from "../../src/core/usage.js";
import { newId } from "../../src/store/ids.js";
import { useLoopd } from "../support/helpers/use-loopd.js";

const f = useLoopd();

const call = (id: string) => ({ type: "tool_call" as const, id, name: "calculate", input: { expression: "1+1" } });
const assistant = (...ids: string[]): NewMessage => ({
  role: "assistant",
  content: [{ type: "text", text: "…" }, ...ids.map(call)],
});
const result = (id: string): NewMessage => ({
  role: "tool",
  content: [{ type: "tool_result", tool_call_id: id, name: "calculate", content: "2", is_error: false }],
});
const user = (text: string): NewMessage => ({ role: "user", content: [{ type: "text", text }] });

/** Histories the one-statement creation must judge as the general path's repair does (`repairTail`). */
const HISTORIES: Record<string, NewMessage[]> = {
  empty: [],
  "an answer calling no tool": [user("a"), assistant()],
  "every call answered (a run ended by finish, or out of budget after its tools)": [
    user("a"),
    assistant("c1", "c2"),
    result("c1"),
    result("c2"),
  ],
  "every call answered, then a user message (a run that failed before its answer)": [
    user("a"),
    assistant("c1"),
    result("c1"),
    user("b"),
  ],
  "an older orphan only (repairs look from the last assistant message on)": [user("a"), assistant("old"), assistant()],
  "the last answer's call unanswered (a crash during the tool)": [user("a"), assistant("c1")],
  "one of two calls unanswered": [user("a"), assistant("c1", "c2"), result("c2")],
  "an unanswered call, then a user message": [user("a"), assistant("c1"), user("b")],
};

test.each(Object.entries(HISTORIES))(
  "a run is created in one statement exactly when the history needs no repair: %s",
  async (_, history) => {
    const conv = (await f.loopd.app.inject({ method: "POST", url: "/conversations" })).json();
    const { store } = f.loopd.services;
    if (history.length > 0)
      await store.messages.append({ conversationId: conv.id, runId: null, items: history, firstSeq: 1 });
    const started = await store.runs.start({
      run: {
        id: newId("run"),
        conversationId: conv.id,
        provider: "mock",
        model: "mock",
        usage: emptyUsage(),
        request: { max_steps: 1, tool_choice: "auto", model: null, budget: null, finish: null } as never,
        idempotencyKey: null,
        requestHash: "h",
        leaseOwner: "test",
      },
      leaseMs: 60_000,
      tenant: "default",
      cap: 0,
      messageId: newId("msg"),
      content: [{ type: "text", text: "next" }],
    });
    const needsRepair = repairTail(history).length > 0;
    expect(started === null).toBe(needsRepair);
    if (started && "run" in started) {
      expect(started.run.firstSeq).toBe(history.length + 1);
    } else {
      // Refused for a repair: nothing written.
      expect((await store.runs.list({ conversationId: conv.id, limit: 10 })).rows).toHaveLength(0);
      expect(await store.messages.lastSeq(conv.id)).toBe(history.length);
    }
  },
);
