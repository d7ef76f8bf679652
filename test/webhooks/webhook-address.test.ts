import { expect, test } from "vitest";
import { resolveWebhookHost, WebhookAddressError } from "../../src/webhooks/webhook-address.js";
import { createLookupPool, type HostLookup } from "../../src/webhooks/webhook-lookups.js";

/** Lookups answered by the test (no query leaves this machine). */
const answering =
  (answers: Record<string, { address: string; family: number }[] | Error>): HostLookup =>
  async (host) => {
    const answer = answers[host];
    if (answer === undefined || answer instanceof Error)
      throw answer ?? Object.assign(new Error("not found"), { code: "ENOTFOUND" });
    return answer;
  };

test("a name that is not found and one that resolves inside get the same answer, which names no address (review: the 400 told a tenant the internal address)", async () => {
  const lookupHost = answering({
    "inside.example": [{ address: "10.1.2.3", family: 4 }],
    "mixed.example": [
      { address: "93.184.215.14", family: 4 },
      { address: "fd00::1", family: 6 },
    ],
  });
  const messages = [];
  for (const host of ["inside.example", "mixed.example", "nowhere.example"]) {
    const err = await resolveWebhookHost(host, { allowPrivate: false, lookupHost }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(WebhookAddressError);
    messages.push((err as Error).message.replace(host, "HOST"));
    expect((err as Error).message).not.toMatch(/10\.1\.2\.3|fd00|ENOTFOUND/);
  }
  expect(new Set(messages).size).toBe(1);
  expect(messages[0]).toBe(
    "HOST does not resolve to public addresses only: it is not found, or is a loopback, private, link-local or otherwise internal address (set WEBHOOK_ALLOW_PRIVATE=true to allow them)",
  );
  // Allowed, an inside name resolves, and one not found says so.
  expect(await resolveWebhookHost("inside.example", { allowPrivate: true, lookupHost })).toEqual([
    { address: "10.1.2.3", family: 4 },
  ]);
  await expect(resolveWebhookHost("nowhere.example", { allowPrivate: true, lookupHost })).rejects.toThrow(
    "nowhere.example could not be resolved (ENOTFOUND)",
  );
  expect(
    await resolveWebhookHost("public.example", {
      allowPrivate: false,
      lookupHost: answering({ "public.example": [{ address: "93.184.215.14", family: 4 }] }),
    }),
  ).toEqual([{ address: "93.184.215.14", family: 4 }]);
});

test("a tenant's lookups whose DNS never answers hold only its share of places, each freed at its deadline; another tenant's lookup goes at once", async () => {
  const asked: string[] = [];
  // A resolver that heeds its signal, as c-ares's cancel does: a hanging name ends when its deadline aborts it.
  const pool = createLookupPool({
    servers: [],
    total: 3,
    perTenant: 2,
    resolve: (host, { signal }) => {
      asked.push(host);
      if (!host.startsWith("hang")) return Promise.resolve([{ address: "93.184.215.14", family: 4 }]);
      return new Promise((_, reject) =>
        signal.addEventListener("abort", () => reject(Object.assign(new Error("cancelled"), { code: "ECANCELLED" })), {
          once: true,
        }),
      );
    },
  });
  const resolve = (tenant: string, host: string, timeoutMs: number) =>
    resolveWebhookHost(host, { allowPrivate: false, timeoutMs, lookupHost: pool.of(tenant) });
  const hanging = [0, 1, 2].map((i) => resolve("a", `hang${i}.example`, 300).catch((e: Error) => e.message));
  // Tenant a's third waits for its share; tenant b's goes at once, and so does c's (the pool's last place).
  const started = Date.now();
  expect(await resolve("b", "quick.example", 300)).toEqual([{ address: "93.184.215.14", family: 4 }]);
  expect(await resolve("c", "quick2.example", 300)).toEqual([{ address: "93.184.215.14", family: 4 }]);
  expect(Date.now() - started).toBeLessThan(250);
  expect(asked).toEqual(["hang0.example", "hang1.example", "quick.example", "quick2.example"]);
  // All three of a's gave up at their bound.
  expect(await Promise.all(hanging)).toEqual(
    [0, 1, 2].map(
      (i) =>
        `hang${i}.example does not resolve to public addresses only: it is not found, or is a loopback, private, link-local or otherwise internal address (set WEBHOOK_ALLOW_PRIVATE=true to allow them)`,
    ),
  );
  // Cancelled at their deadline, the hung lookups hold nothing: a's next goes at once.
  expect(await resolve("a", "quick.example", 300)).toEqual([{ address: "93.184.215.14", family: 4 }]);
});
