import { expect, test } from "vitest";
import { MAX_LOOKUPS_IN_FLIGHT, resolveWebhookHost, WebhookAddressError, type HostLookup } from "../../src/webhooks/webhook-address.js";

/** Lookups answered by the test (no query leaves this machine). */
const answering =
  (answers: Record<string, { address: string; family: number }[] | Error>): HostLookup =>
  async (host) => {
    const answer = answers[host];
    if (answer === undefined || answer instanceof Error) throw answer ?? Object.assign(new Error("not found"), { code: "ENOTFOUND" });
    return answer;
  };

test("a name that is not found and one that resolves inside get the same answer, which names no address (review: the 400 told a tenant the internal address)", async () => {
  const lookupHost = answering({ "inside.example": [{ address: "10.1.2.3", family: 4 }], "mixed.example": [{ address: "93.184.215.14", family: 4 }, { address: "fd00::1", family: 6 }] });
  const messages = [];
  for (const host of ["inside.example", "mixed.example", "nowhere.example"]) {
    const err = await resolveWebhookHost(host, { allowPrivate: false, lookupHost }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(WebhookAddressError);
    messages.push((err as Error).message.replace(host, "HOST"));
    expect((err as Error).message).not.toMatch(/10\.1\.2\.3|fd00|ENOTFOUND/);
  }
  expect(new Set(messages).size).toBe(1);
  expect(messages[0]).toBe("HOST does not resolve to public addresses only: it is not found, or is a loopback, private, link-local or otherwise internal address (set WEBHOOK_ALLOW_PRIVATE=true to allow them)");
  // Allowed, an inside name resolves, and one not found says so.
  expect(await resolveWebhookHost("inside.example", { allowPrivate: true, lookupHost })).toEqual([{ address: "10.1.2.3", family: 4 }]);
  await expect(resolveWebhookHost("nowhere.example", { allowPrivate: true, lookupHost })).rejects.toThrow("nowhere.example could not be resolved (ENOTFOUND)");
  expect(await resolveWebhookHost("public.example", { allowPrivate: false, lookupHost: answering({ "public.example": [{ address: "93.184.215.14", family: 4 }] }) })).toEqual([{ address: "93.184.215.14", family: 4 }]);
});

test(`lookups whose DNS never answers hold at most ${MAX_LOOKUPS_IN_FLIGHT} places, kept until they end; others wait their turn and are bounded in time (review: they filled libuv's thread pool)`, async () => {
  let started = 0;
  const hung: (() => void)[] = [];
  const lookupHost: HostLookup = (host) => {
    started++;
    if (host.startsWith("hang")) return new Promise((resolve) => hung.push(() => resolve([{ address: "93.184.215.14", family: 4 }])));
    return Promise.resolve([{ address: "93.184.215.14", family: 4 }]);
  };
  const hanging = Array.from({ length: 4 }, (_, i) => resolveWebhookHost(`hang${i}.example`, { allowPrivate: false, timeoutMs: 100, lookupHost }).catch((e: Error) => e.message));
  // Only two reached the resolver; all four gave up at their bound.
  expect(await Promise.all(hanging)).toEqual(Array.from({ length: 4 }, (_, i) => `hang${i}.example does not resolve to public addresses only: it is not found, or is a loopback, private, link-local or otherwise internal address (set WEBHOOK_ALLOW_PRIVATE=true to allow them)`));
  expect(started).toBe(MAX_LOOKUPS_IN_FLIGHT);
  // The hung lookups still hold their places: the next waits, then gives up too.
  await expect(resolveWebhookHost("quick.example", { allowPrivate: false, timeoutMs: 100, lookupHost })).rejects.toThrow(WebhookAddressError);
  expect(started).toBe(MAX_LOOKUPS_IN_FLIGHT);
  // Once they end, the places are free again (those that gave up while waiting took none).
  hung.forEach((end) => end());
  expect(await resolveWebhookHost("quick.example", { allowPrivate: false, timeoutMs: 1_000, lookupHost })).toEqual([{ address: "93.184.215.14", family: 4 }]);
  expect(await resolveWebhookHost("quick2.example", { allowPrivate: false, timeoutMs: 1_000, lookupHost })).toEqual([{ address: "93.184.215.14", family: 4 }]);
  expect(started).toBe(MAX_LOOKUPS_IN_FLIGHT + 2);
});
