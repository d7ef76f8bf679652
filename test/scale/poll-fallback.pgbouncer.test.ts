/**
 * Behind pgbouncer in transaction mode without `DATABASE_DIRECT_URL`, a
 * LISTEN is not delivered (the server connection that listened goes back to
 * the pool). loopd finds that at start, says so once, and polls at
 * `POLL_INTERVAL_MS`: a stream on one instance still follows a run on the
 * other to its end, a queued run starts when the run ahead ends elsewhere,
 * a cancel reaches the other instance, and a webhook written by a run is sent.
 */
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { heldTool } from "../support/helpers/held-tool.js";
import { usePooledLoopd } from "../support/helpers/use-pooled-loopd.js";
import { newWebhookSecret, startWebhookReceiver, type WebhookReceiver } from "../support/helpers/webhook-receiver.js";
import { client, keyOf } from "./support.js";

const POLL_MS = 300;
const hold = heldTool();
const f = usePooledLoopd({
  direct: false,
  tools: [hold.tool],
  env: {
    API_KEYS_REQUIRED: "true",
    POLL_INTERVAL_MS: String(POLL_MS),
    WEBHOOK_SECRET: newWebhookSecret(),
    WEBHOOK_ALLOW_PRIVATE: "true",
  },
});
const a = () => f.instances[0]!.loopd;
const b = () => f.instances[1]!.loopd;

test("each instance finds LISTEN is not delivered and says so once, naming POLL_INTERVAL_MS and DATABASE_DIRECT_URL", () => {
  for (const { database, logs, loopd } of f.instances) {
    expect(database.listenUrl).toBeNull();
    expect(database.serverPath?.pooled).toBe(true);
    expect(loopd.services.broadcast.fallbackPollMs).toBe(POLL_MS);
    const said = logs.filter((l) => /LISTEN is not delivered/.test(l.msg));
    expect(said).toHaveLength(1);
    expect(said[0]).toMatchObject({ level: 40, poll_interval_ms: POLL_MS });
    expect(said[0].msg).toMatch(/DATABASE_DIRECT_URL/);
  }
});

describe.each(["anthropic", "openai"] as const)("%s", (provider) => {
  test("a stream on one instance follows a run executing on the other to its end, within a poll of it", async () => {
    const key = await keyOf(a(), `follow-${provider}`);
    const [ca, cb] = [client(a(), key), client(b(), key)];
    const id = await ca.conversation({ provider });
    hold.reset();
    f.llm.script({ toolCalls: [{ name: "hold", input: {} }] }, { text: "Followed." });
    const run = (await ca.inject("POST", `/conversations/${id}/messages`, { content: "Go.", wait: false })).json().run;
    await hold.entered();
    const stream = cb.inject("GET", `/conversations/${id}/runs/${run.id}/events`);
    // Long enough for a follower backing off unbounded to wait 2 s between reads; B's must still read every POLL_INTERVAL_MS.
    await new Promise((r) => setTimeout(r, 2_500));
    const released = Date.now();
    hold.release();
    const res = await stream;
    const lag = Date.now() - released;
    expect(res.statusCode).toBe(200);
    expect(res.body).toContain("event: run.completed");
    expect(res.body).toContain("Followed.");
    expect(lag).toBeLessThan(POLL_MS + 1_200);
  });

  test("a run queued on one instance behind a run on the other starts when that run ends, and a cancel asked on the other instance stops a run", async () => {
    const key = await keyOf(a(), `queue-${provider}`);
    const [ca, cb] = [client(a(), key), client(b(), key)];
    const id = await ca.conversation({ provider });
    hold.reset();
    f.llm.script({ toolCalls: [{ name: "hold", input: {} }] }, { text: "First." }, { text: "Second." });
    const first = (await ca.inject("POST", `/conversations/${id}/messages`, { content: "One.", wait: false })).json()
      .run;
    await hold.entered();
    const queued = (
      await cb.inject("POST", `/conversations/${id}/messages`, { content: "Two.", on_busy: "enqueue", wait: false })
    ).json().run;
    expect(queued).toMatchObject({ status: "queued", queued_behind: first.id });
    const released = Date.now();
    hold.release();
    const second = await cb.until(id, queued.id, ["completed", "failed"]);
    expect(second.status).toBe("completed");
    // Started by A at its run's end (nobody could tell it through LISTEN), not by the stalled-queue sweeper seconds later.
    expect(Date.now() - released).toBeLessThan(POLL_MS + 1_500);

    hold.reset();
    f.llm.script({ toolCalls: [{ name: "hold", input: {} }] });
    const third = (await ca.inject("POST", `/conversations/${id}/messages`, { content: "Three.", wait: false })).json()
      .run;
    await hold.entered();
    const asked = Date.now();
    const cancelled = await cb.inject("POST", `/conversations/${id}/runs/${third.id}/cancel`);
    expect(cancelled.json()).toMatchObject({ id: third.id, status: "cancelled" });
    // At A's next lease renewal (at most a second).
    expect(Date.now() - asked).toBeLessThan(2_500);
    hold.release();
  });
});

describe("webhooks", () => {
  let receiver: WebhookReceiver;
  beforeAll(async () => (receiver = await startWebhookReceiver("")));
  afterAll(async () => receiver?.close());

  test("a delivery written by a run is sent though its trigger's NOTIFY reaches nobody, within about POLL_INTERVAL_MS", async () => {
    const key = await keyOf(a(), "hooked");
    const ca = client(a(), key);
    receiver.secret = (await ca.inject("GET", "/webhooks/secret")).json().secret;
    f.llm.respond = () => ({ text: "Done." });
    const id = await ca.conversation({
      provider: "anthropic",
      webhook: { url: `${receiver.url}/hook`, events: ["run.completed"] },
    });
    const ended = Date.now();
    const res = await ca.inject("POST", `/conversations/${id}/messages`, { content: "Go." });
    expect(res.json().run.status).toBe("completed");
    const [got] = await receiver.waitFor(1, 5_000);
    expect(got!.verified?.type).toBe("run.completed");
    expect(got!.at - ended).toBeLessThan(POLL_MS + 2_000);
  });
});
