/**
 * Webhooks are signed per tenant: each tenant reads its own secret (derived
 * from WEBHOOK_SECRET, which is never given out), a webhook of one tenant
 * does not verify with another's, and a rotate gives a new one while the one
 * it replaced keeps verifying for a day.
 */
import { afterAll, beforeAll, expect, test } from "vitest";
import { sql } from "drizzle-orm";
import { useLoopd } from "../support/helpers/use-loopd.js";
import {
  newWebhookSecret,
  startWebhookReceiver,
  verifyWebhook,
  type WebhookReceiver,
} from "../support/helpers/webhook-receiver.js";

const MASTER = newWebhookSecret();
const f = useLoopd({ env: { API_KEYS_REQUIRED: "true", WEBHOOK_SECRET: MASTER, WEBHOOK_ALLOW_PRIVATE: "true" } });
const call = (key: string, method: "GET" | "POST", url: string, payload?: object) =>
  f.loopd.app.inject({ method, url, ...(payload && { payload }), headers: { authorization: `Bearer ${key}` } });
const secretOf = async (key: string) => {
  const res = await call(key, "GET", "/webhooks/secret");
  expect(res.statusCode).toBe(200);
  return res.json().secret as string;
};

let acme = "";
let beta = "";
let receiver: WebhookReceiver;
beforeAll(async () => {
  acme = (await f.loopd.services.store.keys.create({ tenant: "acme", name: null })).key;
  beta = (await f.loopd.services.store.keys.create({ tenant: "beta", name: null })).key;
  receiver = await startWebhookReceiver(MASTER);
});
afterAll(() => receiver?.close());

/** A run of the key's tenant that completes with a webhook to the receiver; the webhook as received. */
async function delivered(key: string) {
  const before = receiver.received.length;
  const conv = (
    await call(key, "POST", "/conversations", { provider: "openai", webhook: { url: receiver.url } })
  ).json();
  f.llm.script({ text: "Hi." });
  expect((await call(key, "POST", `/conversations/${conv.id}/messages`, { content: "Hello" })).statusCode).toBe(200);
  return (await receiver.waitFor(before + 1)).at(-1)!;
}

test("each tenant has its own whsec_ secret, the same on every read, and never the master", async () => {
  const [a, b] = [await secretOf(acme), await secretOf(beta)];
  expect(a).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/);
  expect(b).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/);
  expect(a).not.toBe(b);
  expect(await secretOf(acme)).toBe(a);
  for (const secret of [a, b]) expect(secret).not.toBe(MASTER);
});

test("a webhook delivered to tenant acme verifies with acme's secret, not with beta's nor with the master", async () => {
  const got = await delivered(acme);
  expect(verifyWebhook(await secretOf(acme), got)).toMatchObject({ type: "run.completed" });
  expect(verifyWebhook(await secretOf(beta), got)).toBeNull();
  expect(got.verified).toBeNull();
});

test("a rotate answers a new secret; the next webhooks verify with the new one and, for 24 h, with the one it replaced", async () => {
  const old = await secretOf(beta);
  const before = await secretOf(acme);
  const rotated = await call(beta, "POST", "/webhooks/secret/rotate");
  expect(rotated.statusCode).toBe(200);
  const fresh = rotated.json().secret as string;
  expect(fresh).toMatch(/^whsec_/);
  expect(fresh).not.toBe(old);
  expect(await secretOf(beta)).toBe(fresh);
  // Another tenant's is not touched.
  expect(await secretOf(acme)).toBe(before);

  const got = await delivered(beta);
  expect(verifyWebhook(fresh, got)).toMatchObject({ type: "run.completed" });
  expect(verifyWebhook(old, got)).toMatchObject({ type: "run.completed" });
  expect(verifyWebhook(before, got)).toBeNull();

  // A day on (the rotate's record moved back 25 h): only the new secret signs.
  await f.database.db.execute(
    sql`update webhook_secrets set created_at = now() - interval '25 hours' where tenant_id = 'beta'`,
  );
  const later = await delivered(beta);
  expect(verifyWebhook(fresh, later)).toMatchObject({ type: "run.completed" });
  expect(verifyWebhook(old, later)).toBeNull();
  expect(String(later.headers["webhook-signature"]).split(" ")).toHaveLength(1);
});

test("rotating many times signs each webhook with at most four secrets", async () => {
  for (let i = 0; i < 6; i++) expect((await call(acme, "POST", "/webhooks/secret/rotate")).statusCode).toBe(200);
  const current = await secretOf(acme);
  const got = await delivered(acme);
  expect(verifyWebhook(current, got)).toMatchObject({ type: "run.completed" });
  expect(String(got.headers["webhook-signature"]).split(" ")).toHaveLength(4);
});

test("without a key, the secret routes answer 401 and nothing is rotated", async () => {
  const before = await secretOf(acme);
  expect((await f.loopd.app.inject({ method: "GET", url: "/webhooks/secret" })).statusCode).toBe(401);
  expect(
    (
      await f.loopd.app.inject({
        method: "POST",
        url: "/webhooks/secret/rotate",
        headers: { authorization: "Bearer lpd_not-a-key-that-exists-00000000000000000" },
      })
    ).statusCode,
  ).toBe(401);
  expect(await secretOf(acme)).toBe(before);
});
