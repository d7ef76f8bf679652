/**
 * Webhook deliveries are shared fairly: claimed round-robin across tenants,
 * at most WEBHOOK_MAX_INFLIGHT_PER_HOST tries in flight to one receiver
 * host, and a host whose tries keep timing out is paused, so one tenant's
 * hanging receiver does not delay another tenant's webhooks.
 */
import { afterAll, expect, test } from "vitest";
import { TIMEOUTS_TO_PAUSE } from "../../src/webhooks/delivery-shares.js";
import { useLoopd } from "../support/helpers/use-loopd.js";
import { newWebhookSecret, startWebhookReceiver } from "../support/helpers/webhook-receiver.js";

const SECRET = newWebhookSecret();
const TIMEOUT_MS = 1_000;
const RUNS = 40;
const f = useLoopd({
  listen: true,
  env: {
    API_KEYS_REQUIRED: "true",
    MAX_ACTIVE_RUNS_PER_TENANT: "0",
    WEBHOOK_SECRET: SECRET,
    WEBHOOK_ALLOW_PRIVATE: "true",
    WEBHOOK_TIMEOUT_MS: String(TIMEOUT_MS),
    WEBHOOK_RETRY_BASE_MS: "60000",
  },
});
const hanging = await startWebhookReceiver(SECRET);
hanging.answer = () => "hang";
const quiet = await startWebhookReceiver(SECRET);
afterAll(() => Promise.all([hanging.close(), quiet.close()]));

const call = (key: string, url: string, payload: object) =>
  f.loopd.app.inject({ method: "POST", url, headers: { authorization: `Bearer ${key}` }, payload });
async function endRuns(key: string, webhook: string, count: number): Promise<void> {
  const conv = (await call(key, "/conversations", { provider: "openai", webhook: { url: webhook } })).json()
    .id as string;
  for (let i = 0; i < count; i++) {
    f.llm.script({ text: "Done." });
    expect((await call(key, `/conversations/${conv}/messages`, { content: `Run ${i}` })).statusCode).toBe(200);
  }
}
const triesOf = async (tenant: string) =>
  Number(
    (
      (await f.database.db.execute(
        `select coalesce(sum(jsonb_array_length(d.attempts)), 0)::int as n from webhook_deliveries d join runs r on r.id = d.run_id join conversations c on c.id = r.conversation_id where c.tenant_id = '${tenant}'` as never,
      )) as unknown as { rows: { n: number }[] }
    ).rows[0]!.n,
  );

test("another tenant's webhook arrives at once while one tenant's 40 runs wait on a receiver that hangs, which gets 2 tries at a time and is paused after it keeps timing out", async () => {
  const a = (await f.loopd.services.store.keys.create({ tenant: "flood", name: null })).key;
  const b = (await f.loopd.services.store.keys.create({ tenant: "quiet", name: null })).key;
  // Each tenant's webhooks are signed with its own secret.
  quiet.secret = (
    await f.loopd.app.inject({ method: "GET", url: "/webhooks/secret", headers: { authorization: `Bearer ${b}` } })
  ).json().secret;
  await endRuns(a, hanging.url, RUNS);
  await hanging.waitFor(2);
  const ended = Date.now();
  await endRuns(b, quiet.url, 1);
  const [first] = await quiet.waitFor(1, 5_000);
  // Well before a single try of the flooding tenant could time out and give its slot back.
  expect(first!.at - ended).toBeLessThan(TIMEOUT_MS);
  expect(first!.verified).not.toBeNull();
  // Never more than two tries at once to the hanging host (those started less those recorded): the 40 deliveries do not take the worker.
  expect(hanging.received.length - (await triesOf("flood"))).toBeLessThanOrEqual(2);

  // After TIMEOUTS_TO_PAUSE timeouts in a row the host is paused: the tries then in flight end, and no more start.
  await expect.poll(() => triesOf("flood"), { timeout: 10_000, interval: 50 }).toBe(TIMEOUTS_TO_PAUSE + 1);
  const before = hanging.received.length;
  expect(before).toBe(TIMEOUTS_TO_PAUSE + 1);
  await endRuns(b, quiet.url, 1);
  await quiet.waitFor(2, 5_000);
  // Had the host not been paused, two more of its 36 due deliveries would have started as the last two timed out.
  expect(hanging.received.length).toBe(before);
});
