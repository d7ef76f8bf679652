/**
 * Two loopd instances on one database, both behind pgbouncer in transaction
 * mode (`DATABASE_URL`), with `DATABASE_DIRECT_URL` for LISTEN and
 * migrations: what the contract promises per conversation, run, tenant and
 * key holds across them (Scale: many instances on the Postgres people run).
 * pgbouncer 1.18 (Debian's) knows nothing of prepared statements: a named one
 * reaching it, a session advisory lock or a startup parameter it refuses
 * would fail these tests.
 */
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { heldTool } from "../support/helpers/held-tool.js";
import { usePooledLoopd } from "../support/helpers/use-pooled-loopd.js";
import { newWebhookSecret, startWebhookReceiver, type WebhookReceiver } from "../support/helpers/webhook-receiver.js";
import { client, keyOf } from "./support.js";

const hold = heldTool();
const f = usePooledLoopd({
  tools: [hold.tool],
  env: {
    API_KEYS_REQUIRED: "true",
    RATE_LIMIT_PER_MIN: "120",
    MAX_ACTIVE_RUNS_PER_TENANT: "2",
    MAX_STREAMS_PER_TENANT: "2",
    WEBHOOK_SECRET: newWebhookSecret(),
    WEBHOOK_ALLOW_PRIVATE: "true",
  },
});
const a = () => f.instances[0]!.loopd;
const b = () => f.instances[1]!.loopd;

test("DATABASE_URL is taken as a pooler: LISTEN goes to DATABASE_DIRECT_URL, no poll fallback is announced", () => {
  for (const { database, logs, loopd } of f.instances) {
    expect(database.serverPath).toEqual({ pooled: true, refusedStartupParameters: true });
    expect(database.listenUrl).toBe(f.directUrl);
    expect(loopd.services.broadcast.fallbackPollMs).toBeNull();
    expect(logs.filter((l) => /LISTEN is not delivered/.test(l.msg))).toEqual([]);
    // pgbouncer refuses the session's timeouts as startup parameters: loopd opens without them and says so once.
    expect(logs.filter((l) => /refuses statement_timeout/.test(l.msg))).toHaveLength(1);
  }
});

describe.each(["anthropic", "openai"] as const)("%s", (provider) => {
  test("one active run per conversation across instances: of two sends at once one runs, the other gets 409; one enqueued on the other instance runs after a cancel asked there", async () => {
    const key = await keyOf(a(), `busy-${provider}`);
    const [ca, cb] = [client(a(), key), client(b(), key)];
    const id = await ca.conversation({ provider });
    hold.reset();
    f.llm.script({ toolCalls: [{ name: "hold", input: {} }] }, { text: "the queued one ran" });
    const sends = await Promise.all(
      [ca, cb].map((c) => c.inject("POST", `/conversations/${id}/messages`, { content: "Go.", wait: false })),
    );
    expect(sends.map((s) => s.statusCode).sort()).toEqual([202, 409]);
    expect(sends.find((s) => s.statusCode === 409)!.json().error.code).toBe("conversation_busy");
    const first = sends.find((s) => s.statusCode === 202)!.json().run;
    const owner = sends[0]!.statusCode === 202 ? ca : cb;
    const other = owner === ca ? cb : ca;
    await hold.entered();

    const queued = await other.inject("POST", `/conversations/${id}/messages`, {
      content: "Then this.",
      on_busy: "enqueue",
      wait: false,
    });
    expect(queued.statusCode).toBe(202);
    expect(queued.json().run).toMatchObject({ status: "queued", queued_behind: first.id });

    const cancelled = await other.inject("POST", `/conversations/${id}/runs/${first.id}/cancel`);
    expect(cancelled.statusCode).toBe(200);
    expect(cancelled.json()).toMatchObject({ id: first.id, status: "cancelled" });
    hold.release();
    const next = await owner.until(id, queued.json().run.id, ["completed", "failed"]);
    expect(next.status).toBe("completed");
    const history = (await owner.inject("GET", `/conversations/${id}/messages?limit=100`)).json().data;
    expect(history.at(-1)).toMatchObject({ role: "assistant" });
    expect(JSON.stringify(history.at(-1).content)).toContain("the queued one ran");
  });

  test("a run paused for an approval on one instance is answered on the other, and goes on there", async () => {
    const key = await keyOf(a(), `approve-${provider}`);
    const [ca, cb] = [client(a(), key), client(b(), key)];
    const id = await ca.conversation({ provider, approval_required: ["hold"] });
    hold.reset();
    hold.release();
    f.llm.script({ toolCalls: [{ name: "hold", input: {} }] }, { text: "It is 42." });
    const paused = await ca.inject("POST", `/conversations/${id}/messages`, { content: "6 times 7?" });
    expect(paused.statusCode).toBe(200);
    const run = paused.json().run;
    expect(run.status).toBe("requires_action");
    const answered = await cb.inject("POST", `/conversations/${id}/runs/${run.id}/actions`, {
      approvals: [{ tool_call_id: run.required_action.tool_calls[0].tool_call_id, approve: true }],
    });
    expect(answered.statusCode).toBe(200);
    expect(answered.json()).toMatchObject({ run: { id: run.id, status: "completed" }, output_text: "It is 42." });
  });
});

test("the per-tenant run cap holds across instances: three runs started at once on two instances with a cap of 2 — two start, one gets 429 too_many_runs", async () => {
  const key = await keyOf(a(), "capped");
  const clients = [client(a(), key), client(b(), key), client(a(), key)];
  const ids = await Promise.all(
    clients.map((c) => c.conversation({ provider: "openai", approval_required: ["hold"] })),
  );
  f.llm.respond = () => ({ toolCalls: [{ name: "hold", input: {} }] });
  const answers = await Promise.all(
    clients.map((c, i) => c.inject("POST", `/conversations/${ids[i]}/messages`, { content: "Add." })),
  );
  expect(answers.map((r) => r.statusCode).sort()).toEqual([200, 200, 429]);
  expect(answers.find((r) => r.statusCode === 429)!.json()).toMatchObject({
    error: { code: "too_many_runs", details: { active_runs: 2 } },
  });
  for (const [i, r] of answers.entries()) {
    if (r.statusCode !== 200) continue;
    const run = r.json().run;
    // Cancelled on the instance that did not pause it.
    const other = clients[i] === clients[1] ? clients[0]! : clients[1]!;
    expect((await other.inject("POST", `/conversations/${ids[i]}/runs/${run.id}/cancel`)).statusCode).toBe(200);
  }
});

test("the rate limit per key is shared: 120 requests a minute split across two instances, the 121st is 429 on either, with the headers counting down together", async () => {
  const key = await keyOf(a(), "limited");
  const [ca, cb] = [client(a(), key), client(b(), key)];
  const remaining: number[] = [];
  for (let i = 0; i < 120; i++) {
    const res = await (i % 2 === 0 ? ca : cb).inject("GET", "/conversations?limit=1");
    expect(res.statusCode).toBe(200);
    expect(res.headers["x-ratelimit-limit"]).toBe("120");
    remaining.push(Number(res.headers["x-ratelimit-remaining"]));
  }
  expect(remaining).toEqual(Array.from({ length: 120 }, (_, i) => 119 - i));
  for (const c of [ca, cb]) {
    const refused = await c.inject("GET", "/conversations?limit=1");
    expect(refused.statusCode).toBe(429);
    expect(refused.json().error.code).toBe("rate_limited");
    expect(Number(refused.headers["retry-after"])).toBeGreaterThan(0);
    expect(Number(refused.headers["x-ratelimit-reset"])).toBeLessThanOrEqual(60);
  }
  // Another key is counted on its own.
  const fresh = await client(b(), await keyOf(a(), "limited-2")).inject("GET", "/conversations?limit=1");
  expect(fresh.statusCode).toBe(200);
  expect(fresh.headers["x-ratelimit-remaining"]).toBe("119");
});

test("a tenant's stream share counts its streams on every instance: two open on one, a third on the other is 429 too_many_streams; once they close, the other opens one", async () => {
  const key = await keyOf(a(), "streamer");
  const [ca, cb] = [client(a(), key), client(b(), key)];
  const id = await ca.conversation({ provider: "anthropic" });
  hold.reset();
  f.llm.script({ toolCalls: [{ name: "hold", input: {} }] }, { text: "Streamed." });
  const run = (await ca.inject("POST", `/conversations/${id}/messages`, { content: "Go.", wait: false })).json().run;
  await hold.entered();
  const events = `/conversations/${id}/runs/${run.id}/events`;
  const open = [ca.inject("GET", events), ca.inject("GET", events)];
  await until(() => a().streams.gate.openOf("streamer") === 2);
  // A publishes what it holds, then B learns it (each also does so every second on its own).
  await a().streams.sync();
  await b().streams.sync();
  const refused = await cb.inject("GET", events);
  expect(refused.statusCode).toBe(429);
  expect(refused.json()).toMatchObject({ error: { code: "too_many_streams", details: { max_streams_per_tenant: 2 } } });

  hold.release();
  for (const res of await Promise.all(open)) expect(res.body).toContain("event: run.completed");
  await a().streams.sync();
  await b().streams.sync();
  const later = await cb.inject("GET", events);
  expect(later.statusCode).toBe(200);
});

describe("webhooks", () => {
  let receiver: WebhookReceiver;
  beforeAll(async () => (receiver = await startWebhookReceiver("")));
  afterAll(async () => receiver?.close());

  test("each run's webhook is delivered once though both instances' workers claim from the one outbox (6 runs, 3 on each)", async () => {
    const key = await keyOf(a(), "hooked");
    const [ca, cb] = [client(a(), key), client(b(), key)];
    receiver.secret = (await ca.inject("GET", "/webhooks/secret")).json().secret;
    f.llm.respond = () => ({ text: "Done." });
    const runs: { id: string; conversationId: string }[] = [];
    for (let i = 0; i < 6; i++) {
      const c = i % 2 === 0 ? ca : cb;
      const id = await c.conversation({
        provider: "anthropic",
        webhook: { url: `${receiver.url}/hook`, events: ["run.completed"] },
      });
      const res = await c.inject("POST", `/conversations/${id}/messages`, { content: `Run ${i}.` });
      expect(res.json().run.status).toBe("completed");
      runs.push({ id: res.json().run.id, conversationId: id });
    }
    await receiver.waitFor(6);
    for (const run of runs) {
      const deliveries = await waitDelivered(ca, run.conversationId, run.id);
      expect(deliveries).toHaveLength(1);
      expect(deliveries[0].attempts).toHaveLength(1);
    }
    const ids = receiver.received.map((r) => r.id);
    expect(new Set(ids).size).toBe(ids.length);
    expect(receiver.received.every((r) => r.verified?.type === "run.completed")).toBe(true);
    expect(ids.sort()).toEqual(runs.map((r) => `${r.id}.run.completed`).sort());
  });
});

async function waitDelivered(c: ReturnType<typeof client>, conversationId: string, runId: string) {
  const deadline = Date.now() + 10_000;
  for (;;) {
    const data = (await c.inject("GET", `/conversations/${conversationId}/runs/${runId}/webhooks`)).json().data;
    if (data.every((d: { status: string }) => d.status !== "pending") || Date.now() > deadline) return data;
    await new Promise((r) => setTimeout(r, 100));
  }
}

async function until(ok: () => boolean, timeoutMs = 5_000) {
  const deadline = Date.now() + timeoutMs;
  while (!ok()) {
    if (Date.now() > deadline) throw new Error("not within the time");
    await new Promise((r) => setTimeout(r, 20));
  }
}
