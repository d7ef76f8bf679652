import { lookup } from "node:dns/promises";
import { BlockList, isIP } from "node:net";

/**
 * Where a webhook may not be sent unless `WEBHOOK_ALLOW_PRIVATE=true`: this
 * machine, private networks and what is not one host. node:net's BlockList
 * also matches an IPv4-mapped IPv6 address (`::ffff:127.0.0.1`) against the
 * IPv4 ranges.
 */
const PRIVATE = new BlockList();
for (const [network, prefix] of [
  ["0.0.0.0", 8], // "this network"
  ["10.0.0.0", 8],
  ["100.64.0.0", 10], // carrier-grade NAT
  ["127.0.0.0", 8],
  ["169.254.0.0", 16], // link-local (cloud metadata services)
  ["172.16.0.0", 12],
  ["192.0.0.0", 24], // IETF protocol assignments
  ["192.168.0.0", 16],
  ["198.18.0.0", 15], // benchmarking
  ["224.0.0.0", 4], // multicast
  ["240.0.0.0", 4], // reserved, and the broadcast address
] as const) {
  PRIVATE.addSubnet(network, prefix, "ipv4");
}
for (const [network, prefix] of [
  ["::", 128], // unspecified
  ["::1", 128],
  ["::", 96], // IPv4-compatible (deprecated)
  ["fc00::", 7], // unique local
  ["fe80::", 10], // link-local
  ["ff00::", 8], // multicast
] as const) {
  PRIVATE.addSubnet(network, prefix, "ipv6");
}

/** Whether `address` (an IP literal) is one a webhook may not reach by default. */
export function isPrivateAddress(address: string): boolean {
  const family = isIP(address);
  return family === 0 || PRIVATE.check(address, family === 4 ? "ipv4" : "ipv6");
}

/** A host a webhook may not reach, or one that could not be resolved: what the 400 or the failed try says. */
export class WebhookAddressError extends Error {
  override readonly name = "WebhookAddressError";
}

/** A URL's host as an address or a name: `[::1]` → `::1`. */
export const hostOf = (url: URL) => url.hostname.replace(/^\[|\]$/g, "");

/** @default 5000 */
export const DNS_TIMEOUT_MS = 5_000;

/**
 * The addresses `host` resolves to, every one of them checked: a name with
 * any private address among them is refused whole (a receiver is not reached
 * through the one public address of a name that also points inside). An IP
 * literal is checked as it is. Resolution is bounded in time. With
 * `allowPrivate`, nothing is refused.
 */
export async function resolveWebhookHost(host: string, { allowPrivate, timeoutMs = DNS_TIMEOUT_MS }: { allowPrivate: boolean; timeoutMs?: number }): Promise<{ address: string; family: 4 | 6 }[]> {
  const literal = isIP(host);
  const found = literal ? [{ address: host, family: literal as 4 | 6 }] : await lookupWithin(host, timeoutMs);
  if (found.length === 0) throw new WebhookAddressError(`${host} does not resolve to any address`);
  if (!allowPrivate) {
    const refused = found.find((a) => isPrivateAddress(a.address));
    if (refused) {
      const which = literal ? `${host} is` : `${host} resolves to ${refused.address}, which is`;
      throw new WebhookAddressError(`${which} a loopback, private, link-local or otherwise internal address (set WEBHOOK_ALLOW_PRIVATE=true to allow them)`);
    }
  }
  return found;
}

async function lookupWithin(host: string, timeoutMs: number): Promise<{ address: string; family: 4 | 6 }[]> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new WebhookAddressError(`${host} could not be resolved within ${timeoutMs} ms`)), timeoutMs);
  });
  try {
    // getaddrinfo cannot be cancelled: past the bound it is left to finish on its own.
    const found = await Promise.race([lookup(host, { all: true, verbatim: true }), late]);
    return found.map((a) => ({ address: a.address, family: a.family === 6 ? 6 : 4 }));
  } catch (err) {
    if (err instanceof WebhookAddressError) throw err;
    throw new WebhookAddressError(`${host} could not be resolved (${(err as { code?: string }).code ?? (err as Error).message})`);
  } finally {
    clearTimeout(timer);
  }
}
