/**
 * Where a webhook may not go: with WEBHOOK_ALLOW_PRIVATE off, a URL whose
 * host is, or resolves to, an address of this machine or a private network
 * is a 400 naming the field, and nothing is saved; the delivery checks the
 * addresses again and connects only to the ones it checked. Without
 * WEBHOOK_SECRET no webhook is taken at all.
 */
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { Webhook } from "standardwebhooks";
import { createWebhookAgents, postWebhook } from "../../src/webhooks/post-webhook.js";
import { webhookLookupsFor } from "../../src/webhooks/webhook-lookups.js";
import { rowCounts } from "../support/helpers/row-counts.js";
import { startLoopd, type TestLoopd } from "../support/helpers/start-loopd.js";
import { useLoopd } from "../support/helpers/use-loopd.js";
import { newWebhookSecret, startWebhookReceiver, type WebhookReceiver } from "../support/helpers/webhook-receiver.js";

const SECRET = newWebhookSecret();
const f = useLoopd({ env: { WEBHOOK_SECRET: SECRET } });
let receiver: WebhookReceiver;
beforeAll(async () => {
  receiver = await startWebhookReceiver(SECRET);
});
afterAll(() => receiver?.close());

const inject = (loopd: TestLoopd, method: "POST" | "PATCH", url: string, payload: object) =>
  loopd.app.inject({ method, url, payload });

const REFUSED = [
  ["loopback", "http://127.0.0.1:9/hook"],
  ["loopback, elsewhere in 127/8", "http://127.1.2.3/hook"],
  ["loopback, as a decimal number", "http://2130706433/hook"],
  ["IPv6 loopback", "http://[::1]:9/hook"],
  ["IPv4-mapped IPv6 loopback", "http://[::ffff:127.0.0.1]/hook"],
  ["the unspecified address", "http://0.0.0.0/hook"],
  ["IPv6 unspecified", "http://[::]/hook"],
  ["a name that resolves to loopback", "http://localhost:9/hook"],
  ["10/8", "https://10.1.2.3/hook"],
  ["172.16/12", "http://172.20.0.1/hook"],
  ["192.168/16", "http://192.168.1.1/hook"],
  ["CGNAT 100.64/10", "http://100.64.0.1/hook"],
  ["link-local (cloud metadata)", "http://169.254.169.254/latest/meta-data"],
  ["IPv6 link-local", "http://[fe80::1]/hook"],
  ["IPv6 unique local", "http://[fd12:3456::1]/hook"],
  ["multicast", "http://224.0.0.1/hook"],
  ["broadcast", "http://255.255.255.255/hook"],
  // Review: IPv6 forms a network translates to an IPv4 host inside.
  ["NAT64 of 10.0.0.1", "http://[64:ff9b::a00:1]/hook"],
  ["NAT64 of loopback, dotted", "http://[64:ff9b::127.0.0.1]/hook"],
  ["NAT64 for local use", "http://[64:ff9b:1::5db8:d70e]/hook"],
  ["IPv4-translated (SIIT) 192.168.0.1", "http://[::ffff:0:c0a8:1]/hook"],
  ["6to4 of 10.0.0.1", "http://[2002:a00:1::1]/hook"],
  ["IPv6 site-local", "http://[fec0::1]/hook"],
] as const;

describe("WEBHOOK_ALLOW_PRIVATE off", () => {
  test.each(REFUSED)(
    "%s (%s): 400 naming body.webhook.url, on create and on PATCH; nothing saved",
    async (_what, url) => {
      const before = await rowCounts(f.database);
      const created = await inject(f.loopd, "POST", "/conversations", { webhook: { url } });
      expect(created.statusCode).toBe(400);
      expect(created.json().error).toMatchObject({ code: "invalid_request", details: { field: "body.webhook.url" } });
      expect(created.json().error.message).toMatch(/^body\.webhook\.url: .*(loopback, private, link-local|internal)/);
      expect(await rowCounts(f.database)).toEqual(before);

      const conv = (await inject(f.loopd, "POST", "/conversations", {})).json();
      const patched = await inject(f.loopd, "PATCH", `/conversations/${conv.id}`, { webhook: { url } });
      expect(patched.statusCode).toBe(400);
      expect(patched.json().error.details.field).toBe("body.webhook.url");
      expect((await f.loopd.app.inject({ method: "GET", url: `/conversations/${conv.id}` })).json().webhook).toBeNull();
    },
  );

  test("a public address is taken as it is (no lookup for a literal), also through NAT64 or 6to4", async () => {
    for (const url of [
      "https://93.184.215.14/hook",
      "https://[64:ff9b::5db8:d70e]/hook",
      "https://[2002:5db8:d70e::1]/hook",
    ]) {
      const created = await inject(f.loopd, "POST", "/conversations", { webhook: { url, events: ["run.failed"] } });
      expect(created.statusCode, url).toBe(201);
      expect(created.json().webhook).toEqual({ url, events: ["run.failed"] });
    }
  });

  test("allowed with WEBHOOK_ALLOW_PRIVATE=true", async () => {
    const open = await startLoopd({
      database: f.database,
      llm: f.llm,
      env: { WEBHOOK_SECRET: SECRET, WEBHOOK_ALLOW_PRIVATE: "true" },
    });
    try {
      for (const [, url] of REFUSED)
        expect((await inject(open, "POST", "/conversations", { webhook: { url } })).statusCode, url).toBe(201);
    } finally {
      await open.close();
    }
  });
});

test("without WEBHOOK_SECRET a webhook is a 400 (nothing is ever sent unsigned), and nothing is saved; there is no tenant secret (404)", async () => {
  const unsigned = await startLoopd({ database: f.database, llm: f.llm, env: { WEBHOOK_ALLOW_PRIVATE: "true" } });
  try {
    const before = await rowCounts(f.database);
    const res = await inject(unsigned, "POST", "/conversations", { webhook: { url: receiver.url } });
    expect(res.statusCode).toBe(400);
    expect(res.json().error).toMatchObject({ code: "invalid_request", details: { field: "body.webhook.url" } });
    expect(res.json().error.message).toMatch(/WEBHOOK_SECRET/);
    expect(await rowCounts(f.database)).toEqual(before);
    // No secret to read or rotate either: the contract's 404, saying why.
    for (const [method, url] of [
      ["GET", "/webhooks/secret"],
      ["POST", "/webhooks/secret/rotate"],
    ] as const) {
      const asked = await unsigned.app.inject({ method, url });
      expect({ url, status: asked.statusCode }).toEqual({ url, status: 404 });
      expect(asked.json().error).toMatchObject({
        code: "not_found",
        message: expect.stringMatching(/sends no webhooks.*WEBHOOK_SECRET/),
      });
    }
  } finally {
    await unsigned.close();
  }
});

describe("at delivery", () => {
  const agents = createWebhookAgents({ maxSockets: 2 });
  afterAll(() => agents.destroy());
  const post = (url: string, allowPrivate: boolean) =>
    postWebhook({
      url,
      id: "run_x.run.completed",
      body: "{}",
      signer: new Webhook(SECRET),
      allowPrivate,
      timeoutMs: 2_000,
      agents,
      lookupHost: webhookLookupsFor([]).deliveries.of("default"),
      signal: new AbortController().signal,
    });

  test("the addresses are checked again: a name that resolves to loopback is not connected to", async () => {
    const before = receiver.received.length;
    const url = receiver.url.replace("127.0.0.1", "localhost");
    expect(await post(url, false)).toEqual({
      outcome: "refused",
      statusCode: null,
      error: expect.stringMatching(/^not sent: localhost does not resolve to public addresses only/),
    });
    expect(await post(receiver.url, false)).toMatchObject({ outcome: "refused" });
    expect(receiver.received.length).toBe(before);
    // Allowed, the connection goes to the address the check resolved, and the receiver verifies it.
    expect(await post(url, true)).toEqual({ outcome: "delivered", statusCode: 200, error: null });
    expect(receiver.received.at(-1)).toMatchObject({ id: "run_x.run.completed", verified: {} });
    expect(receiver.received.at(-1)!.headers.host).toBe(new URL(url).host);
  });

  test("a 2xx whose body comes slowly is delivered: the status settles the try, not the body's end (review: it was a timeout, and sent again)", async () => {
    const dripping = createServer((_req, res) => {
      res.writeHead(200);
      const drip = setInterval(() => res.write("x"), 50);
      res.on("close", () => clearInterval(drip));
    });
    await new Promise<void>((resolve) => dripping.listen(0, "127.0.0.1", resolve));
    try {
      const { port } = dripping.address() as AddressInfo;
      expect(await post(`http://127.0.0.1:${port}/hook`, true)).toEqual({
        outcome: "delivered",
        statusCode: 200,
        error: null,
      });
    } finally {
      dripping.closeAllConnections();
      dripping.close();
    }
  });

  test("a refused connection is a failed try that says so", async () => {
    expect(await post("http://127.0.0.1:9/hook", true)).toEqual({
      outcome: "unreachable",
      statusCode: null,
      error: "could not reach 127.0.0.1:9 (ECONNREFUSED)",
    });
  });
});
