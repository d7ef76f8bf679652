import { describe, expect, test } from "vitest";
import type { FakeTurn } from "../support/fake-llm/server.js";
import { api } from "../support/helpers/api.js";
import { isEvent, readSse, type SseEvent } from "../support/helpers/sse-client.js";
import { useLoopd } from "../support/helpers/use-loopd.js";

// Wide enough that a cold SDK's first chunk on a busy machine is not taken for a stall.
const IDLE_MS = 1_000;
const CALL_TIMEOUT_MS = 3_000;
const f = useLoopd({
  listen: true,
  env: { MODEL_STREAM_IDLE_MS: String(IDLE_MS), MODEL_CALL_TIMEOUT_MS: String(CALL_TIMEOUT_MS) },
});

type TimedEvent = SseEvent & { at: number };

/** Each event of a streamed run with the time it reached the client; `onEvent` sees each as it comes. */
async function streamRun(
  conversationId: string,
  content: string,
  onEvent?: (event: TimedEvent, seen: TimedEvent[]) => Promise<void>,
): Promise<TimedEvent[]> {
  const res = await fetch(`${f.loopd.url}/conversations/${conversationId}/messages`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ content, stream: true }),
  });
  const events: TimedEvent[] = [];
  for await (const item of readSse(res)) {
    if (!isEvent(item)) continue;
    events.push({ ...item, at: performance.now() });
    await onEvent?.(events.at(-1)!, events);
  }
  return events;
}

const elapsed = (from: { at: number }, to: { at: number }) => Math.round(to.at - from.at);

describe.each(["anthropic", "openai"] as const)("deadlines of model calls through %s", (provider) => {
  const client = () => api(f.loopd.app);

  test.each([
    ["keeps sending keep-alives", { keepAliveMs: 50 }],
    ["sends nothing more", {}],
  ])(
    "a stream that stalls mid-answer and %s fails the run as a provider error at the idle deadline, and the next message works",
    async (_how, keepAlive) => {
      const conv = await client().createConversation({ provider });
      f.llm.script({ toolCalls: [{ name: "calculate", input: { expression: "6*7" } }] });
      let stalled = { at: 0 };
      f.llm.respond = (): FakeTurn => {
        // The fake sends its five chunks at once, then stalls.
        stalled = { at: performance.now() };
        return { text: "The answer is forty two, as the tool said.", stallAfterChunks: 5, ...keepAlive };
      };
      const events = await streamRun(conv.id, "What is 6*7?");
      const end = events.at(-1)!;
      expect(end.event).toBe("run.failed");
      expect(end.data.run).toMatchObject({
        status: "failed",
        stop_reason: "error",
        steps: 1,
        error: { code: "provider_error", message: "the model stream sent nothing for 1 s; the call was abandoned" },
      });
      expect(events.some((e) => e.event === "text.delta")).toBe(true);
      const stallToEnd = elapsed(stalled, end);
      expect(stallToEnd).toBeGreaterThanOrEqual(IDLE_MS);
      expect(stallToEnd).toBeLessThan(IDLE_MS + 1_000);

      f.llm.respond = null;
      f.llm.script({ text: "Still here." });
      const next = (await client().send(conv.id, { content: "Are you there?" })).json();
      expect(next.run).toMatchObject({ status: "completed", error: null });
      expect(next.output_text).toBe("Still here.");
      expect((await client().history(conv.id)).map((m) => m.role)).toEqual([
        "user",
        "assistant",
        "tool",
        "user",
        "assistant",
      ]);
    },
  );

  test("a stream that keeps sending content past the call deadline fails the run as a provider error at that deadline", async () => {
    const conv = await client().createConversation({ provider });
    const words = Array.from({ length: 60 }, (_, i) => `word${i}`).join(" ");
    f.llm.script({ text: words, chunkDelayMs: 100 });
    const sent = { at: performance.now() };
    const events = await streamRun(conv.id, "Talk for a while.");
    const end = events.at(-1)!;
    expect(end.data.run).toMatchObject({
      status: "failed",
      error: { code: "provider_error", message: "the model call took longer than 3 s; it was abandoned" },
    });
    expect(events.some((e) => e.event === "text.delta")).toBe(true);
    const toEnd = elapsed(sent, end);
    expect(toEnd).toBeGreaterThanOrEqual(CALL_TIMEOUT_MS);
    expect(toEnd).toBeLessThan(CALL_TIMEOUT_MS + 1_000);
  });

  test("a retried call that runs past the deadline names the call's whole limit, not what was left of it", async () => {
    const conv = await client().createConversation({ provider });
    const words = Array.from({ length: 60 }, (_, i) => `word${i}`).join(" ");
    f.llm.script({ status: provider === "anthropic" ? 529 : 503 }, { text: words, chunkDelayMs: 100 });
    const events = await streamRun(conv.id, "Talk for a while.");
    expect(events.filter((e) => e.event === "model.retry")).toHaveLength(1);
    expect(events.at(-1)!.data.run).toMatchObject({
      status: "failed",
      error: { code: "provider_error", message: "the model call took longer than 3 s; it was abandoned" },
    });
  });

  test("a cancel during a model call still ends the run cancelled, not failed", async () => {
    const conv = await client().createConversation({ provider });
    f.llm.script({ text: "one two three four five six seven eight nine ten", chunkDelayMs: 100 });
    let cancelled = false;
    const events = await streamRun(conv.id, "Count slowly.", async (event, seen) => {
      if (event.event !== "text.delta" || cancelled) return;
      cancelled = true;
      await f.loopd.app.inject({
        method: "POST",
        url: `/conversations/${conv.id}/runs/${seen[0]!.data.run.id}/cancel`,
      });
    });
    expect(events.at(-1)!.data.run).toMatchObject({ status: "cancelled", stop_reason: "cancelled", error: null });
  });
});
