import { z } from "zod";
import { describe, expect, test } from "vitest";
import { defineTool } from "../../src/tools/define-tool.js";
import type { FakeTurn, RecordedRequest } from "../support/fake-llm/server.js";
import { api } from "../support/helpers/api.js";
import { isEvent, readSse, type SseEvent } from "../support/helpers/sse-client.js";
import { useLoopd } from "../support/helpers/use-loopd.js";

/**
 * Runs that ride out a failing provider (the contract's "Model resilience"):
 * loopd's one retry loop, Retry-After, fallbacks across providers, the
 * cooldown, and no tool run twice — through the real SDKs against the fake.
 */

let toolRuns = 0;
const counted = defineTool({
  name: "count_me",
  description: "Counts how often it runs.",
  input: z.object({}),
  execute: () => `ran ${++toolRuns}`,
});

const COOLDOWN_MS = 1_500;
const f = useLoopd({
  listen: true,
  tools: [counted],
  env: {
    MODEL_RETRY_BASE_MS: "20",
    MODEL_COOLDOWN_MS: String(COOLDOWN_MS),
    // Fallbacks to another provider need its key here (the SDK clients are the test's).
    ANTHROPIC_API_KEY: "test-anthropic-key",
    OPENAI_API_KEY: "test-openai-key",
  },
});

const other = { anthropic: "openai", openai: "anthropic" } as const;
let models = 0;
/** A model name of the test's own: the process's circuits are per model, and one test must not cool another's. */
const freshModel = (provider: string) => `${provider}-model-${++models}`;

type TimedEvent = SseEvent & { at: number };

async function streamRun(conversationId: string, body: Record<string, unknown>): Promise<TimedEvent[]> {
  const res = await fetch(`${f.loopd.url}/conversations/${conversationId}/messages`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ stream: true, ...body }),
  });
  const events: TimedEvent[] = [];
  for await (const item of readSse(res)) if (isEvent(item)) events.push({ ...item, at: performance.now() });
  return events;
}

const named = <E extends SseEvent>(events: E[], name: string) => events.filter((e) => e.event === name);
const endOf = (events: SseEvent[]) => events.at(-1)!.data.run;

/** The text a client shows: the deltas after the last `step.restarted` of each step (here: one step). */
function shownText(events: SseEvent[]): string {
  const restart = events.findLastIndex((e) => e.event === "step.restarted");
  return events
    .slice(restart + 1)
    .filter((e) => e.event === "text.delta")
    .map((e) => e.data.delta as string)
    .join("");
}

async function savedAnswer(conversationId: string): Promise<string> {
  const history = await api(f.loopd.app).history(conversationId);
  const last = history.filter((m) => m.role === "assistant").at(-1);
  return last.content.map((b: { text?: string }) => b.text ?? "").join("");
}

describe.each(["anthropic", "openai"] as const)("a model call through %s", (provider) => {
  const busy = provider === "anthropic" ? 529 : 503;
  const conversation = (extra: Record<string, unknown> = {}) =>
    api(f.loopd.app).createConversation({ provider, model: freshModel(provider), ...extra });

  test(`two ${busy}s then an answer: one run, completed, two model.retry events`, async () => {
    const conv = await conversation();
    f.llm.script({ status: busy }, { status: busy }, { text: "made it" });
    const events = await streamRun(conv.id, { content: "hi" });
    expect(endOf(events)).toMatchObject({ status: "completed", steps: 1 });
    const retries = named(events, "model.retry");
    expect(retries.map((e) => e.data)).toEqual([
      expect.objectContaining({
        step: 1,
        attempt: 1,
        provider,
        model: conv.model,
        reason: expect.objectContaining({ status: busy }),
      }),
      expect.objectContaining({ step: 1, attempt: 2, provider, model: conv.model }),
    ]);
    expect(f.llm.requests).toHaveLength(3);
    expect(await savedAnswer(conv.id)).toBe("made it");
  });

  test("a 429 with Retry-After: 1 is waited for, about a second, then retried", async () => {
    const conv = await conversation();
    f.llm.script({ status: 429, headers: { "retry-after": "1" } }, { text: "after the wait" });
    const started = performance.now();
    const events = await streamRun(conv.id, { content: "hi" });
    expect(endOf(events)).toMatchObject({ status: "completed" });
    expect(named(events, "model.retry")[0]!.data.delay_ms).toBe(1000);
    expect(performance.now() - started).toBeGreaterThanOrEqual(950);
  });

  test("a 429 with Retry-After: 120 falls over to the fallback at once", async () => {
    const fallback = freshModel(other[provider]);
    const conv = await conversation({ fallbacks: [{ provider: other[provider], model: fallback }] });
    f.llm.script({ status: 429, headers: { "retry-after": "120" } }, { text: "the fallback answers" });
    const started = performance.now();
    const events = await streamRun(conv.id, { content: "hi" });
    expect(performance.now() - started).toBeLessThan(10_000);
    expect(endOf(events)).toMatchObject({
      status: "completed",
      provider,
      model: conv.model,
      models_used: [{ provider: other[provider], model: fallback, steps: 1 }],
    });
    expect(named(events, "model.retry")).toEqual([]);
    expect(named(events, "model.fallback").map((e) => e.data)).toEqual([
      {
        step: 1,
        from: { provider, model: conv.model },
        to: { provider: other[provider], model: fallback },
        reason: expect.objectContaining({ code: "retry_after_too_long", status: 429 }),
      },
    ]);
    expect(f.llm.requests.map((r) => r.api)).toEqual([provider, other[provider]]);
    // The trace keeps both attempts, each naming where it went; the OpenAPI schema describes them.
    const res = await f.loopd.app.inject({
      method: "GET",
      url: `/conversations/${conv.id}/runs/${endOf(events).id}/trace?expand=requests`,
    });
    const calls = (res.json() as { spans: Record<string, unknown>[] }).spans.filter((s) => s.type === "model.call");
    expect(calls).toEqual([
      expect.objectContaining({
        step: 1,
        outcome: "failed",
        provider,
        model: conv.model,
        status: 429,
        error: expect.any(String),
        request_verified: true,
      }),
      expect.objectContaining({
        step: 1,
        outcome: "ok",
        provider: other[provider],
        model: fallback,
        request_verified: true,
      }),
    ]);
    expect(calls[0]).not.toHaveProperty("response");
  });

  test("a 429 with Retry-After: 120 and no fallback fails the run with provider_unavailable at once", async () => {
    const conv = await conversation();
    f.llm.script({ status: 429, headers: { "retry-after": "120" }, message: "Rate limited: slow down" });
    const started = performance.now();
    const events = await streamRun(conv.id, { content: "hi" });
    expect(performance.now() - started).toBeLessThan(10_000);
    const run = endOf(events);
    expect(run).toMatchObject({ status: "failed", error: { code: "provider_unavailable" } });
    expect(run.error.message).toContain(`${provider}/${conv.model}: 429`);
    expect(run.error.message).toContain("Rate limited: slow down");
    expect(f.llm.requests).toHaveLength(1);
  });

  test("a 400 is never retried nor fallen over: provider_error after one request", async () => {
    const conv = await conversation({ fallbacks: [{ provider: other[provider], model: freshModel(other[provider]) }] });
    f.llm.script({ status: 400, message: "max_tokens: too large" });
    const events = await streamRun(conv.id, { content: "hi" });
    expect(endOf(events)).toMatchObject({ status: "failed", error: { code: "provider_error" } });
    expect(f.llm.requests).toHaveLength(1);
    expect(named(events, "model.retry")).toEqual([]);
    expect(named(events, "model.fallback")).toEqual([]);
  });

  test("an error event halfway through the stream: its deltas are withdrawn, and the text shown is the saved answer", async () => {
    const conv = await conversation();
    f.llm.script(
      { text: "the first attempt says this and then fails", errorAfterChunks: 6 },
      { text: "the second attempt says all of it" },
    );
    const events = await streamRun(conv.id, { content: "hi" });
    expect(endOf(events)).toMatchObject({ status: "completed", steps: 1 });
    const restarted = named(events, "step.restarted");
    expect(restarted.map((e) => e.data.step)).toEqual([1]);
    const before = events.slice(0, events.indexOf(restarted[0]!));
    expect(before.some((e) => e.event === "text.delta")).toBe(true);
    expect(named(events, "model.retry")[0]!.data.reason).toMatchObject({ status: null });
    expect(shownText(events)).toBe("the second attempt says all of it");
    expect(await savedAnswer(conv.id)).toBe("the second attempt says all of it");
  });

  test("the primary down for a whole run: the cross-provider fallback answers every step; the next message, the primary again", async () => {
    const fallback = freshModel(other[provider]);
    const conv = await conversation({
      tools: ["count_me"],
      fallbacks: [{ provider: other[provider], model: fallback }],
    });
    const calls = { [provider]: 0, [other[provider]]: 0 } as Record<string, number>;
    f.llm.respond = (req: RecordedRequest): FakeTurn => {
      calls[req.api]!++;
      if (req.api === provider) return { status: busy };
      // The fallback is sent the whole history, the other provider's ids included, in its own format.
      return calls[req.api] === 1 ? { toolCalls: [{ name: "count_me" }] } : { text: "done by the fallback" };
    };
    const events = await streamRun(conv.id, { content: "count once" });
    const run = endOf(events);
    expect(run).toMatchObject({
      status: "completed",
      steps: 2,
      provider,
      model: conv.model,
      models_used: [{ provider: other[provider], model: fallback, steps: 2 }],
    });
    expect(named(events, "model.fallback").map((e) => e.data.to)).toEqual([
      { provider: other[provider], model: fallback },
      { provider: other[provider], model: fallback },
    ]);
    const got = await f.loopd.app.inject({ method: "GET", url: `/conversations/${conv.id}/runs/${run.id}` });
    expect(got.json().models_used).toEqual([{ provider: other[provider], model: fallback, steps: 2 }]);

    // Eight failures in a row cooled the primary down: once that is over, one call probes it.
    await new Promise((resolve) => setTimeout(resolve, COOLDOWN_MS));
    f.llm.respond = null;
    f.llm.script({ text: "the primary is back" });
    const next = endOf(await streamRun(conv.id, { content: "and now?" }));
    expect(next).toMatchObject({ status: "completed", models_used: [{ provider, model: conv.model, steps: 1 }] });
    expect(f.llm.requests.at(-1)!.api).toBe(provider);
  });

  test("every model down: provider_unavailable within a bounded time, each model named, no key in the message", async () => {
    const fallback = freshModel(other[provider]);
    const conv = await conversation({ fallbacks: [{ provider: other[provider], model: fallback }] });
    f.llm.respond = () => ({ status: 503, message: "upstream unavailable" });
    const started = performance.now();
    const run = endOf(await streamRun(conv.id, { content: "hi" }));
    expect(performance.now() - started).toBeLessThan(15_000);
    expect(run).toMatchObject({ status: "failed", error: { code: "provider_unavailable" } });
    expect(run.error.message).toContain(`${provider}/${conv.model}: 503`);
    expect(run.error.message).toContain(`${other[provider]}/${fallback}: 503`);
    expect(run.error.message).toContain("upstream unavailable");
    expect(run.error.message).not.toMatch(/test-(anthropic|openai)-key/);
    expect(f.llm.requests).toHaveLength(8);
  });

  test("a tool whose step's next model call needs three attempts runs once", async () => {
    const conv = await conversation({ tools: ["count_me"] });
    const before = toolRuns;
    f.llm.script({ toolCalls: [{ name: "count_me" }] }, { status: busy }, { status: 500 }, { text: "counted" });
    const events = await streamRun(conv.id, { content: "count" });
    expect(endOf(events)).toMatchObject({ status: "completed", steps: 2 });
    expect(toolRuns - before).toBe(1);
    expect(named(events, "tool_call.completed")).toHaveLength(1);
    expect(named(events, "model.retry").map((e) => e.data.step)).toEqual([2, 2]);
  });

  test("max_seconds: 3 against a long outage ends in about 3 s", async () => {
    const conv = await conversation();
    f.llm.respond = () => ({ status: busy, headers: { "retry-after": "2" } });
    const started = performance.now();
    const run = endOf(await streamRun(conv.id, { content: "hi", budget: { max_seconds: 3 } }));
    expect(performance.now() - started).toBeLessThan(6_000);
    expect(run).toMatchObject({ status: "failed", error: { code: "provider_unavailable" } });
  });
});

describe("the cooldown", () => {
  const health = async () =>
    (await f.loopd.app.inject({ method: "GET", url: "/models/health" })).json().data as Record<string, unknown>[];

  test("five failed attempts in a row open it (GET /models/health: cooling_down); after MODEL_COOLDOWN_MS a probe that succeeds closes it", async () => {
    const model = freshModel("anthropic");
    const conv = await api(f.loopd.app).createConversation({ provider: "anthropic", model });
    f.llm.script({ status: 529 }, { status: 529 }, { status: 529 }, { status: 529 });
    expect(endOf(await streamRun(conv.id, { content: "one" }))).toMatchObject({
      error: { code: "provider_unavailable" },
    });
    expect((await health()).find((h) => h.model === model)).toMatchObject({ state: "ok", consecutive_failures: 4 });

    f.llm.script({ status: 529 }, { status: 529 }, { status: 529 }, { status: 529 });
    await streamRun(conv.id, { content: "two" });
    const open = (await health()).find((h) => h.model === model)!;
    expect(open).toMatchObject({
      provider: "anthropic",
      base_url_host: new URL(f.llm.url).host,
      state: "cooling_down",
      last_error: { status: 529, message: "Overloaded" },
    });
    expect(Date.parse(open.until as string)).toBeGreaterThan(Date.now());

    // A chain of one cooling down: its model is probed at once rather than waited for.
    await new Promise((resolve) => setTimeout(resolve, COOLDOWN_MS));
    f.llm.script({ text: "back" });
    expect(endOf(await streamRun(conv.id, { content: "three" }))).toMatchObject({ status: "completed" });
    expect((await health()).find((h) => h.model === model)).toMatchObject({
      state: "ok",
      consecutive_failures: 0,
      until: null,
    });
  });

  test("a model cooling down is skipped: the step goes straight to its fallback", async () => {
    const model = freshModel("anthropic");
    const fallback = freshModel("openai");
    const conv = await api(f.loopd.app).createConversation({
      provider: "anthropic",
      model,
      fallbacks: [{ provider: "openai", model: fallback }],
    });
    f.llm.respond = (req) => (req.api === "anthropic" ? { status: 529 } : { text: "fallback" });
    await streamRun(conv.id, { content: "one" });
    await streamRun(conv.id, { content: "two" });
    expect((await health()).find((h) => h.model === model)).toMatchObject({ state: "cooling_down" });
    f.llm.requests.length = 0;
    const events = await streamRun(conv.id, { content: "three" });
    expect(endOf(events)).toMatchObject({ status: "completed" });
    expect(f.llm.requests.map((r) => r.api)).toEqual(["openai"]);
    expect(named(events, "model.fallback")[0]!.data.reason).toMatchObject({ code: "cooling_down" });
  });
});
