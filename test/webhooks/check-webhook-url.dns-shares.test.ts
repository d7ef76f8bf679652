/**
 * Webhook names are resolved through a cancellable resolver with a share
 * per tenant: a DNS (here a real one on 127.0.0.1, WEBHOOK_DNS_SERVERS) that
 * never answers one tenant's names does not hold up another tenant's check.
 */
import { afterAll, expect, test } from "vitest";
import { newWebhookSecret } from "../support/helpers/webhook-receiver.js";
import { startDnsServer } from "../support/helpers/dns-server.js";
import { useLoopd } from "../support/helpers/use-loopd.js";

const DNS_TIMEOUT_BOUND_MS = 5_000;
const dns = await startDnsServer({
  answers: { "hooks.quiet.example": "93.184.215.14" },
  hang: ["one.slow.example", "two.slow.example"],
});
afterAll(() => dns.close());
const f = useLoopd({
  env: { API_KEYS_REQUIRED: "true", WEBHOOK_SECRET: newWebhookSecret(), WEBHOOK_DNS_SERVERS: dns.address },
});

const create = (key: string, url: string) =>
  f.loopd.app.inject({
    method: "POST",
    url: "/conversations",
    headers: { authorization: `Bearer ${key}` },
    payload: { provider: "openai", webhook: { url } },
  });

test("two names of one tenant whose DNS never answers do not delay another tenant's webhook URL check", async () => {
  const a = (await f.loopd.services.store.keys.create({ tenant: "slow", name: null })).key;
  const b = (await f.loopd.services.store.keys.create({ tenant: "quiet", name: null })).key;
  const slow = [create(a, "https://one.slow.example/hook"), create(a, "https://two.slow.example/hook")];
  // Both of a's names are being asked for (and hang) before b's check starts.
  await expect
    .poll(() => dns.asked.filter((n) => n.endsWith(".slow.example")).length, { interval: 5 })
    .toBeGreaterThanOrEqual(2);
  const started = Date.now();
  const quiet = await create(b, "https://hooks.quiet.example/hook");
  expect(quiet.statusCode).toBe(201);
  expect(Date.now() - started).toBeLessThan(1_000);
  // a's checks end at their bound with a 400 naming the field, and no conversation.
  for (const res of await Promise.all(slow)) {
    expect(res.statusCode).toBe(400);
    expect(res.json()).toMatchObject({ error: { code: "invalid_request", details: { field: "body.webhook.url" } } });
  }
  expect(Date.now() - started).toBeLessThan(DNS_TIMEOUT_BOUND_MS + 1_000);
});
