import { expect, test } from "vitest";
import { useLoopd } from "../support/helpers/use-loopd.js";
import { sseEventsOf } from "../support/helpers/sse-events.js";

// A long lease: renewals (about one a second) rarely land inside a run; the least of three runs drops them.
const f = useLoopd({ env: { RUN_LEASE_MS: "60000" } });

const eventsOf = sseEventsOf;

async function streamedToolRun(conversationId: string) {
  f.llm.script({ toolCalls: [{ name: "calculate", input: { expression: "6*7" } }] }, { text: "42." });
  const before = f.database.statements();
  const res = await f.loopd.app.inject({
    method: "POST",
    url: `/conversations/${conversationId}/messages`,
    payload: { content: "6*7?", stream: true },
  });
  const used = f.database.statements() - before;
  const events = eventsOf(res.body);
  expect(events.at(-1)?.event).toBe("run.completed");
  return { used, events };
}

test("a streamed tool round trip: the run created in one statement, and its stream fed from the run's own writes (its creation's too), not read back from the database", async () => {
  const conv = (
    await f.loopd.app.inject({ method: "POST", url: "/conversations", payload: { provider: "openai" } })
  ).json();
  await streamedToolRun(conv.id); // warm
  const least = Math.min(
    (await streamedToolRun(conv.id)).used,
    (await streamedToolRun(conv.id)).used,
    (await streamedToolRun(conv.id)).used,
  );
  // The conversation read, the run's creation (its history then known), 2 saves (the call with its result — `calculate` only
  // reads —, the answer with the run's end); the stream's first events (run.created, the user message) are what the creation
  // committed, not read back.
  expect(least).toBeLessThanOrEqual(4);
});

test("a run's last answer and its end are one write: the answer's time is the run's completed_at", async () => {
  const conv = (
    await f.loopd.app.inject({ method: "POST", url: "/conversations", payload: { provider: "openai" } })
  ).json();
  const { events } = await streamedToolRun(conv.id);
  const ended = (events.at(-1)!.data as { run: { completed_at: string } }).run.completed_at;
  const created = events
    .filter((e) => e.event === "message.created")
    .map((e) => (e.data as { message: { created_at: string } }).message.created_at);
  // Each write's rows carry its transaction's time: the call and its result were written before, together, the answer with the end.
  expect(created.at(-1)).toBe(ended);
  expect(new Set(created.slice(1, 3)).has(ended)).toBe(false);
  expect(created[1]).toBe(created[2]);
});

test.each(["anthropic", "openai"] as const)(
  "a turn %s refused, written with the run's end, streams as a replay reads it: marked",
  async (provider) => {
    const conv = (await f.loopd.app.inject({ method: "POST", url: "/conversations", payload: { provider } })).json();
    f.llm.script({ text: "I can't help with that.", stop: provider === "anthropic" ? "refusal" : "content_filter" });
    const res = await f.loopd.app.inject({
      method: "POST",
      url: `/conversations/${conv.id}/messages`,
      payload: { content: "Something refused.", stream: true },
    });
    const live = eventsOf(res.body);
    const runId = (live[0]!.data as { run: { id: string } }).run.id;
    const replay = eventsOf(
      (await f.loopd.app.inject({ method: "GET", url: `/conversations/${conv.id}/runs/${runId}/events` })).body,
    );
    const answerIn = (events: typeof live) => events.filter((e) => e.event === "message.created").at(-1)!;
    expect((answerIn(live).data as { message: object }).message).toMatchObject({
      role: "assistant",
      excluded: "refusal",
    });
    // (The user message was streamed before the turn was refused: a replay reads it marked since.)
    expect(answerIn(replay)).toEqual(answerIn(live));
    expect(replay.slice(2)).toEqual(live.slice(2));
  },
);

test("what a stream sent live is what a replay of the run reads from the database, event for event", async () => {
  const conv = (
    await f.loopd.app.inject({ method: "POST", url: "/conversations", payload: { provider: "openai" } })
  ).json();
  const { events: live } = await streamedToolRun(conv.id);
  const runId = (live[0]!.data as { run: { id: string } }).run.id;
  const replay = eventsOf(
    (await f.loopd.app.inject({ method: "GET", url: `/conversations/${conv.id}/runs/${runId}/events` })).body,
  );
  // The events a run's own writes carry: messages with their content and time, a tool's result, the end with its time.
  expect(live.find((e) => e.event === "tool_call.completed")?.data).toMatchObject({
    name: "calculate",
    content: expect.stringContaining("42"),
    is_error: false,
  });
  expect(
    live
      .filter((e) => e.event === "message.created")
      .map((e) => (e.data as { message: { role: string } }).message.role),
  ).toEqual(["user", "assistant", "tool", "assistant"]);
  expect((live.at(-1)!.data as { run: { completed_at: string } }).run.completed_at).toMatch(/^\d{4}-\d\d-\d\dT/);
  expect(replay).toEqual(live);
  expect(live.map((e) => e.id)).toEqual(live.map((_, i) => i + 1));
});
