import { describe, expect, test } from "vitest";
import { api } from "../support/helpers/api.js";
import { useLoopd } from "../support/helpers/use-loopd.js";
import type { FakeTurn } from "../support/fake-llm/server.js";
import { unansweredToolCalls } from "../e2e/loopd-client.js";

/** Short, so that a parked run is probed within the test's time. */
const COOLDOWN_MS = 200;
const f = useLoopd({ env: { MODEL_COOLDOWN_MS: String(COOLDOWN_MS) } });
const client = () => api(f.loopd.app);

const OVERLOADED: FakeTurn = { status: 529, message: "Overloaded" };
/** Every model call fails from now on, the SDK's own retries too, until the test says otherwise. */
const down = () => (f.llm.respond = () => OVERLOADED);
const up = (turn: FakeTurn = { text: "Back again." }) => (f.llm.respond = () => turn);

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
async function until<T>(read: () => Promise<T>, ok: (value: T) => boolean, timeoutMs = 15_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await read();
    if (ok(value)) return value;
    if (Date.now() > deadline) throw new Error(`not reached within ${timeoutMs} ms: ${JSON.stringify(value)}`);
    await sleep(50);
  }
}
const getRun = async (conversationId: string, runId: string) =>
  (await f.loopd.app.inject({ method: "GET", url: `/conversations/${conversationId}/runs/${runId}` })).json();
const eventsOf = async (conversationId: string, runId: string) => {
  const res = await f.loopd.app.inject({ method: "GET", url: `/conversations/${conversationId}/runs/${runId}/events` });
  return res.body
    .split("\n\n")
    .map((chunk) => /^event: (.+)$/m.exec(chunk)?.[1])
    .filter((type): type is string => type !== undefined);
};

/** A conversation whose run parked: its first step ran a tool, its second found every model down. */
async function parkedRun(extra: Record<string, unknown> = {}) {
  const conv = await client().createConversation({ provider: "anthropic", on_provider_outage: "wait", ...extra });
  f.llm.script({ toolCalls: [{ name: "calculate", input: { expression: "6*7" } }] });
  down();
  const res = await client().send(conv.id, { content: "What is 6*7?" });
  expect(res.statusCode).toBe(200);
  return { conv, run: res.json().run };
}

describe("a run whose every model is down", () => {
  test("without on_provider_outage it fails provider_unavailable, its history valid", async () => {
    const conv = await client().createConversation({ provider: "openai" });
    expect(conv.on_provider_outage).toBe("fail");
    down();
    const { run } = (await client().send(conv.id, { content: "Hi" })).json();
    expect(run).toMatchObject({ status: "failed", stop_reason: "error", error: { code: "provider_unavailable" } });
    expect((await client().history(conv.id)).map((m) => m.role)).toEqual(["user"]);
  });

  test("with wait it parks in waiting, holding no lease and nothing of the failed step, then goes on by itself when a model answers", async () => {
    const { conv, run } = await parkedRun();
    // The JSON answer comes when the run parks, as when it pauses.
    expect(run).toMatchObject({ status: "waiting", stop_reason: null, error: { code: "provider_unavailable" } });
    expect(run.outage).toMatchObject({ probes: 1 });
    expect(Date.parse(run.outage.next_probe_at)).toBeGreaterThan(Date.parse(run.outage.since));
    const row = await f.loopd.services.store.runs.get(run.id);
    expect(row).toMatchObject({ status: "waiting", leaseOwner: null, leaseExpiresAt: null });
    // The tool's step is kept whole; the failed call left nothing.
    const history = await client().history(conv.id);
    expect(history.map((m) => m.role)).toEqual(["user", "assistant", "tool"]);
    expect(unansweredToolCalls(history)).toEqual([]);

    // Still down: probed again, no sooner than the cooldown, and it parks again.
    const reparked = await until(
      () => getRun(conv.id, run.id),
      (r) => r.status === "waiting" && r.outage.probes >= 2,
    );
    expect(Date.parse(reparked.outage.since)).toBe(Date.parse(run.outage.since));
    up({ text: "It is 42." });
    const ended = await until(
      () => getRun(conv.id, run.id),
      (r) => !["waiting", "running"].includes(r.status),
    );
    expect(ended).toMatchObject({ status: "completed", stop_reason: "end_turn", error: null, steps: 2 });
    expect((await client().history(conv.id)).map((m) => m.role)).toEqual(["user", "assistant", "tool", "assistant"]);
    const events = await eventsOf(conv.id, run.id);
    expect(events.filter((e) => e === "run.waiting").length).toBeGreaterThanOrEqual(2);
    // Each wake voids what the failed step streamed; the run's end is its one terminal event, the last.
    expect(events.indexOf("step.restarted")).toBeGreaterThan(events.indexOf("run.waiting"));
    expect(events.at(-1)).toBe("run.completed");
  });

  test("a message's on_provider_outage wins over its conversation's, for its run", async () => {
    const conv = await client().createConversation({ provider: "openai" });
    down();
    const { run } = (await client().send(conv.id, { content: "Hi", on_provider_outage: "wait" })).json();
    expect(run.status).toBe("waiting");
    const cancel = await f.loopd.app.inject({
      method: "POST",
      url: `/conversations/${conv.id}/runs/${run.id}/cancel`,
    });
    expect(cancel.json()).toMatchObject({ status: "cancelled", stop_reason: "cancelled" });
  });

  test("cancel ends a waiting run at once, cancelled, and it is never probed again", async () => {
    const { conv, run } = await parkedRun();
    const cancel = await f.loopd.app.inject({
      method: "POST",
      url: `/conversations/${conv.id}/runs/${run.id}/cancel`,
    });
    expect(cancel.statusCode).toBe(200);
    expect(cancel.json()).toMatchObject({ status: "cancelled", stop_reason: "cancelled" });
    const calls = f.llm.requests.length;
    await sleep(COOLDOWN_MS * 3);
    expect(f.llm.requests.length).toBe(calls);
    expect((await eventsOf(conv.id, run.id)).at(-1)).toBe("run.cancelled");
    expect(unansweredToolCalls(await client().history(conv.id))).toEqual([]);
    // The conversation takes the next message.
    up();
    expect((await client().send(conv.id, { content: "Again?" })).json().run.status).toBe("completed");
  });

  test("a new message while it waits: refused by default, queued behind it with enqueue, and it ends superseded with interrupt", async () => {
    const { conv, run } = await parkedRun();
    const refused = await client().send(conv.id, { content: "Still there?" });
    expect(refused.statusCode).toBe(409);
    expect(refused.json().error).toMatchObject({ code: "conversation_busy", details: { active_run_id: run.id } });

    const queued = (await client().send(conv.id, { content: "Then this.", on_busy: "enqueue", wait: false })).json();
    expect(queued.run).toMatchObject({ status: "queued", queued_behind: run.id });
    await sleep(1_500); // past the sweeper's stalled-queue delay: it must not start behind a waiting run
    expect((await getRun(conv.id, queued.run.id)).status).toBe("queued");

    const interrupting = await client().send(conv.id, { content: "Forget it.", on_busy: "interrupt", wait: false });
    expect(interrupting.statusCode).toBe(202);
    // Ended in the interrupt's own transaction; or, caught probing, stopped as a running run is.
    const interrupted = await until(
      () => getRun(conv.id, run.id),
      (r) => !["waiting", "running"].includes(r.status),
    );
    expect(interrupted).toMatchObject({ status: "cancelled", stop_reason: "superseded" });
    up({ text: "Done." });
    // The interrupt goes first, then the enqueued run.
    const first = await until(
      () => getRun(conv.id, interrupting.json().run.id),
      (r) => r.status === "completed",
    );
    const second = await until(
      () => getRun(conv.id, queued.run.id),
      (r) => r.status === "completed",
    );
    expect(Date.parse(first.completed_at)).toBeLessThanOrEqual(Date.parse(second.completed_at));
    expect(unansweredToolCalls(await client().history(conv.id))).toEqual([]);
  });

  test("max_seconds bounds the wait: against a long outage the run ends failed provider_unavailable in about that time", async () => {
    const conv = await client().createConversation({ provider: "openai", on_provider_outage: "wait" });
    down();
    const started = Date.now();
    const { run } = (await client().send(conv.id, { content: "Hi", budget: { max_seconds: 3 } })).json();
    expect(run.status).toBe("waiting");
    // Worked out on this process's clock and set on the database's: a few ms apart.
    expect(Date.parse(run.outage.give_up_at) - Date.parse(run.created_at)).toBeLessThanOrEqual(3_500);
    const ended = await until(
      () => getRun(conv.id, run.id),
      (r) => !["waiting", "running"].includes(r.status),
      20_000,
    );
    const took = Date.now() - started;
    expect(ended).toMatchObject({ status: "failed", stop_reason: "error", error: { code: "provider_unavailable" } });
    expect(took).toBeGreaterThanOrEqual(2_500);
    expect(took).toBeLessThan(15_000);
    expect((await client().history(conv.id)).map((m) => m.role)).toEqual(["user"]);
    expect((await eventsOf(conv.id, run.id)).at(-1)).toBe("run.failed");
  });
});
