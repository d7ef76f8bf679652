/**
 * Run webhooks end to end: loopd on a real socket, a real receiver on
 * 127.0.0.1 (hence WEBHOOK_ALLOW_PRIVATE=true) that verifies every request
 * with the standardwebhooks package, and the outbox read back through
 * GET …/runs/:run_id/webhooks. Tries are short and retries quick, so the
 * retry paths take milliseconds.
 */
import { afterEach, describe, expect, test } from "vitest";
import { createBuiltinTools } from "../../src/tools/builtin/index.js";
import { heldTool } from "../support/helpers/held-tool.js";
import { api } from "../support/helpers/api.js";
import { useLoopd } from "../support/helpers/use-loopd.js";
import { newWebhookSecret, startWebhookReceiver, type WebhookReceiver } from "../support/helpers/webhook-receiver.js";

const SECRET = newWebhookSecret();
// Long enough that a busy machine (other test files in parallel) does not time out a receiver that answers at once.
const TIMEOUT_MS = 1_500;
const MAX_ATTEMPTS = 3;
const hold = heldTool();

const f = useLoopd({
  tools: [...createBuiltinTools(), hold.tool],
  env: {
    WEBHOOK_SECRET: SECRET,
    WEBHOOK_ALLOW_PRIVATE: "true",
    WEBHOOK_TIMEOUT_MS: String(TIMEOUT_MS),
    WEBHOOK_RETRY_BASE_MS: "50",
    WEBHOOK_MAX_ATTEMPTS: String(MAX_ATTEMPTS),
  },
});

const receivers: WebhookReceiver[] = [];
async function receiver(): Promise<WebhookReceiver> {
  // Webhooks are signed with the tenant's own secret, never the master.
  const r = await startWebhookReceiver(
    (await f.loopd.app.inject({ method: "GET", url: "/webhooks/secret" })).json().secret,
  );
  receivers.push(r);
  return r;
}
afterEach(async () => {
  await Promise.all(receivers.splice(0).map((r) => r.close()));
});

const client = () => api(f.loopd.app);
const get = async (url: string) => (await f.loopd.app.inject({ method: "GET", url })).json();
const deliveriesOf = async (conv: string, run: string) =>
  (await get(`/conversations/${conv}/runs/${run}/webhooks`)).data as any[];

/** Polls the outbox (the record of a try follows the receiver's answer) until `done` holds. */
async function deliveriesWhen(
  conv: string,
  run: string,
  done: (d: any[]) => boolean,
  timeoutMs = 10_000,
): Promise<any[]> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const deliveries = await deliveriesOf(conv, run);
    if (done(deliveries)) return deliveries;
    if (Date.now() > deadline) throw new Error(`the deliveries did not settle: ${JSON.stringify(deliveries)}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}
const settled = (d: any[]) => d.length > 0 && d.every((x) => x.status !== "pending");

async function completedRun(webhook: Record<string, unknown>) {
  const conv = await client().createConversation({ provider: "anthropic", webhook });
  f.llm.script({ text: "Hi." });
  const res = await client().send(conv.id, { content: "Hello" });
  expect(res.statusCode).toBe(200);
  return { conv: conv.id as string, run: res.json().run };
}

describe("a run's end", () => {
  test("is POSTed once, signed, as {type, timestamp, data: {run}} with the run as GET shows it, and the outbox says delivered", async () => {
    const r = await receiver();
    const { conv, run } = await completedRun({ url: r.url });
    const [got] = await r.waitFor(1);
    expect(got!.verified).not.toBeNull();
    expect(got!.id).toBe(`${run.id}.run.completed`);
    expect(got!.headers["content-type"]).toBe("application/json");
    const shown = await get(`/conversations/${conv}/runs/${run.id}`);
    expect(got!.verified).toEqual({ type: "run.completed", timestamp: shown.completed_at, data: { run: shown } });
    const [delivery] = await deliveriesWhen(conv, run.id, settled);
    expect(delivery).toEqual({
      id: `${run.id}.run.completed`,
      type: "run.completed",
      url: r.url,
      status: "delivered",
      attempts: [{ at: expect.any(String), status_code: 200, error: null }],
    });
    // The next run of the conversation is its own delivery; the first is not sent again.
    f.llm.script({ text: "Again." });
    const next = (await client().send(conv, { content: "Once more" })).json().run;
    await r.waitFor(2);
    await deliveriesWhen(conv, next.id, settled);
    expect(r.received.map((w) => w.id)).toEqual([`${run.id}.run.completed`, `${next.id}.run.completed`]);
  });

  test("a run without a webhook has no deliveries, and nothing is POSTed", async () => {
    const r = await receiver();
    const conv = await client().createConversation({ provider: "anthropic" });
    f.llm.script({ text: "Hi." });
    const run = (await client().send(conv.id, { content: "Hello" })).json().run;
    expect(await deliveriesOf(conv.id, run.id)).toEqual([]);
    expect(r.received).toEqual([]);
  });

  test("each pause and the end are sent, the second pause under an id of its own; events limits which", async () => {
    const all = await receiver();
    const only = await receiver();
    const pausingTwice = async (url: string, events?: string[]) => {
      const conv = await client().createConversation({
        provider: "anthropic",
        approval_required: ["calculate"],
        webhook: { url, ...(events && { events }) },
      });
      const runs: any[] = [];
      f.llm.script({ toolCalls: [{ name: "calculate", input: { expression: "1+1" } }] });
      let run = (await client().send(conv.id, { content: "Add." })).json().run;
      for (const next of [{ toolCalls: [{ name: "calculate", input: { expression: "2+2" } }] }, { text: "4." }]) {
        expect(run.status).toBe("requires_action");
        runs.push(run);
        f.llm.script(next);
        const answer = { approvals: [{ tool_call_id: run.required_action.tool_calls[0].tool_call_id, approve: true }] };
        run = (
          await f.loopd.app.inject({
            method: "POST",
            url: `/conversations/${conv.id}/runs/${run.id}/actions`,
            payload: answer,
          })
        ).json().run;
      }
      expect(run.status).toBe("completed");
      return { conv: conv.id as string, id: run.id as string, paused: runs };
    };
    const a = await pausingTwice(all.url);
    await deliveriesWhen(a.conv, a.id, (d) => d.length === 3 && settled(d));
    const got = all.received;
    expect(got.every((w) => w.verified !== null)).toBe(true);
    expect([...new Set(got.map((w) => w.id))].sort()).toEqual([
      `${a.id}.run.completed`,
      `${a.id}.run.requires_action`,
      `${a.id}.run.requires_action.2`,
    ]);
    const firstPause = got.find((w) => w.id === `${a.id}.run.requires_action`)!.verified!;
    // The run as it was when it paused, not as it is now.
    expect(firstPause.type).toBe("run.requires_action");
    expect(firstPause.data.run).toMatchObject({
      status: "requires_action",
      required_action: a.paused[0].required_action,
    });
    const secondPause = got.find((w) => w.id === `${a.id}.run.requires_action.2`)!.verified!;
    expect(secondPause.data.run).toMatchObject({
      status: "requires_action",
      required_action: a.paused[1].required_action,
    });

    const b = await pausingTwice(only.url, ["run.completed"]);
    const deliveries = await deliveriesWhen(b.conv, b.id, settled);
    expect(deliveries.map((d) => d.id)).toEqual([`${b.id}.run.completed`]);
    expect(only.received.map((w) => w.id)).toEqual([`${b.id}.run.completed`]);
  });
});

test("a paused run cancelled (ended by closeWaitingRun, not the loop) sends its pause, then run.cancelled", async () => {
  const r = await receiver();
  const conv = await client().createConversation({
    provider: "anthropic",
    approval_required: ["calculate"],
    webhook: { url: r.url },
  });
  f.llm.script({ toolCalls: [{ name: "calculate", input: { expression: "1+1" } }] });
  const run = (await client().send(conv.id, { content: "Add." })).json().run;
  expect(run.status).toBe("requires_action");
  const cancelled = (
    await f.loopd.app.inject({ method: "POST", url: `/conversations/${conv.id}/runs/${run.id}/cancel`, payload: {} })
  ).json();
  expect(cancelled.status).toBe("cancelled");
  const deliveries = await deliveriesWhen(conv.id, run.id, (d) => d.length === 2 && settled(d));
  expect(deliveries.map((d) => [d.id, d.status])).toEqual([
    [`${run.id}.run.requires_action`, "delivered"],
    [`${run.id}.run.cancelled`, "delivered"],
  ]);
  const end = r.received.find((w) => w.id === `${run.id}.run.cancelled`)!;
  expect(end.verified).toEqual({ type: "run.cancelled", timestamp: cancelled.completed_at, data: { run: cancelled } });
});

test("a queued run cancelled before it started (never run by the loop) sends run.cancelled; the run ahead its own end", async () => {
  const r = await receiver();
  hold.reset();
  const conv = await client().createConversation({ provider: "anthropic", tools: ["hold"], webhook: { url: r.url } });
  f.llm.script({ toolCalls: [{ name: "hold", input: {} }] }, { text: "Done." });
  const first = await client().send(conv.id, { content: "first", wait: false });
  expect(first.statusCode).toBe(202);
  await hold.entered();
  const queued = (await client().send(conv.id, { content: "second", on_busy: "enqueue", wait: false })).json().run;
  expect(queued.status).toBe("queued");
  const cancelled = (
    await f.loopd.app.inject({ method: "POST", url: `/conversations/${conv.id}/runs/${queued.id}/cancel`, payload: {} })
  ).json();
  expect(cancelled.status).toBe("cancelled");
  hold.release();
  const [delivery] = await deliveriesWhen(conv.id, queued.id, settled);
  expect(delivery).toMatchObject({ id: `${queued.id}.run.cancelled`, status: "delivered" });
  const sent = r.received.find((w) => w.id === `${queued.id}.run.cancelled`)!;
  expect(sent.verified).toEqual({ type: "run.cancelled", timestamp: cancelled.completed_at, data: { run: cancelled } });
  const ahead = first.json().run.id;
  expect((await deliveriesWhen(conv.id, ahead, settled)).map((d) => d.id)).toEqual([`${ahead}.run.completed`]);
});

describe("retries", () => {
  test("a 500 is tried again under the same webhook-id, each try signed, until a 2xx; every try is recorded", async () => {
    const r = await receiver();
    r.answer = (n) => ({ status: n === 1 ? 500 : 204 });
    const { conv, run } = await completedRun({ url: r.url });
    const got = await r.waitFor(2);
    expect(got.map((w) => w.id)).toEqual([`${run.id}.run.completed`, `${run.id}.run.completed`]);
    expect(got.every((w) => w.verified !== null)).toBe(true);
    // Signed anew for each try: the same body, each try's own timestamp in the signature.
    expect(got[1]!.body).toBe(got[0]!.body);
    const [delivery] = await deliveriesWhen(conv, run.id, settled);
    expect(delivery.status).toBe("delivered");
    expect(delivery.attempts).toEqual([
      { at: expect.any(String), status_code: 500, error: "HTTP 500" },
      { at: expect.any(String), status_code: 204, error: null },
    ]);
    expect(Date.parse(delivery.attempts[1].at)).toBeGreaterThan(Date.parse(delivery.attempts[0].at));
    const metrics = (await f.loopd.app.inject({ method: "GET", url: "/metrics" })).body;
    expect(metrics).toMatch(/^loopd_webhook_attempt_failures_total\{reason="http_error"\} [1-9]/m);
    expect(metrics).toMatch(/^loopd_webhook_deliveries_total\{status="delivered"\} [1-9]/m);
    expect(metrics).toMatch(/^loopd_webhook_oldest_pending_seconds \d/m);
  });

  test("a receiver that never answers: the try times out and is tried again", async () => {
    const r = await receiver();
    r.answer = (n) => (n === 1 ? "hang" : { status: 200 });
    const { conv, run } = await completedRun({ url: r.url });
    await r.waitFor(2);
    const [delivery] = await deliveriesWhen(conv, run.id, settled);
    expect(delivery.status).toBe("delivered");
    expect(delivery.attempts.map((a: any) => [a.status_code, a.error])).toEqual([
      [null, `timed out after ${TIMEOUT_MS} ms`],
      [200, null],
    ]);
  });

  test(`given up (failed) after WEBHOOK_MAX_ATTEMPTS (${MAX_ATTEMPTS}) tries, and not tried again`, async () => {
    const r = await receiver();
    r.answer = () => ({ status: 503 });
    const { conv, run } = await completedRun({ url: r.url });
    const [delivery] = await deliveriesWhen(conv, run.id, settled);
    expect(delivery.status).toBe("failed");
    expect(delivery.attempts.map((a: any) => a.status_code)).toEqual(Array(MAX_ATTEMPTS).fill(503));
    expect(r.received).toHaveLength(MAX_ATTEMPTS);
    const metrics = (await f.loopd.app.inject({ method: "GET", url: "/metrics" })).body;
    expect(metrics).toMatch(/^loopd_webhook_deliveries_total\{status="failed"\} [1-9]/m);
  });

  test("a redirect is not followed: the 302 is a failed try, and where it points is never reached", async () => {
    const target = await receiver();
    const r = await receiver();
    r.answer = () => ({ status: 302, headers: { location: target.url } });
    const { conv, run } = await completedRun({ url: r.url });
    const [delivery] = await deliveriesWhen(conv, run.id, settled);
    expect(delivery.status).toBe("failed");
    expect(delivery.attempts.map((a: any) => [a.status_code, a.error])).toEqual(
      Array(MAX_ATTEMPTS).fill([302, "HTTP 302: redirects are not followed"]),
    );
    expect(r.received).toHaveLength(MAX_ATTEMPTS);
    expect(target.received).toEqual([]);
  });
});

test("an unknown run has no webhooks to list: 404 as on every run route", async () => {
  const conv = await client().createConversation({ provider: "anthropic" });
  const res = await f.loopd.app.inject({
    method: "GET",
    url: `/conversations/${conv.id}/runs/run_0mx0000000000000000000000/webhooks`,
  });
  expect(res.statusCode).toBe(404);
  expect(res.json().error.code).toBe("not_found");
});
