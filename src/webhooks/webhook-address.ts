import { BlockList, isIP } from "node:net";
import type { HostLookup } from "./webhook-lookups.js";

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
  ["64:ff9b:1::", 48], // NAT64 for local use (RFC 8215): whatever it carries is a network's own
  ["fc00::", 7], // unique local
  ["fe80::", 10], // link-local
  ["fec0::", 10], // site-local (deprecated)
  ["ff00::", 8], // multicast
] as const) {
  PRIVATE.addSubnet(network, prefix, "ipv6");
}

/**
 * The IPv4 address an IPv6 one carries, where the network translates it to
 * that IPv4 host: NAT64's well-known prefix (`64:ff9b::/96`), SIIT's
 * IPv4-translated form (`::ffff:0:a.b.c.d`) and 6to4 (`2002:AABB:CCDD::/48`).
 */
function embeddedIpv4(address: string): string | null {
  const words = ipv6Words(address);
  if (!words) return null;
  const v4 = (hi: number, lo: number) => `${hi >> 8}.${hi & 255}.${lo >> 8}.${lo & 255}`;
  const zeros = (from: number, to: number) => words.slice(from, to).every((w) => w === 0);
  if (words[0] === 0x64 && words[1] === 0xff9b && zeros(2, 6)) return v4(words[6]!, words[7]!);
  if (zeros(0, 4) && words[4] === 0xffff && words[5] === 0) return v4(words[6]!, words[7]!);
  if (words[0] === 0x2002) return v4(words[1]!, words[2]!);
  return null;
}

/** An IPv6 literal's eight 16-bit words (a dotted IPv4 tail included), or null. */
function ipv6Words(address: string): number[] | null {
  let text = address.toLowerCase();
  const dotted = /(\d+)\.(\d+)\.(\d+)\.(\d+)$/.exec(text);
  if (dotted) {
    const [a, b, c, d] = dotted.slice(1).map(Number) as [number, number, number, number];
    text = `${text.slice(0, dotted.index)}${((a << 8) | b).toString(16)}:${((c << 8) | d).toString(16)}`;
  }
  const [head, tail] = text.split("::") as [string, string | undefined];
  const part = (p: string) => (p === "" ? [] : p.split(":").map((w) => parseInt(w, 16)));
  const left = part(head);
  const right = tail === undefined ? [] : part(tail);
  const words =
    tail === undefined
      ? left
      : [...left, ...Array<number>(Math.max(0, 8 - left.length - right.length)).fill(0), ...right];
  return words.length === 8 && words.every((w) => Number.isInteger(w) && w >= 0 && w <= 0xffff) ? words : null;
}

/** Whether `address` (an IP literal) is one a webhook may not reach by default. */
export function isPrivateAddress(address: string): boolean {
  const family = isIP(address);
  if (family === 0) return true;
  if (family === 4) return PRIVATE.check(address, "ipv4");
  const carried = embeddedIpv4(address);
  return PRIVATE.check(address, "ipv6") || (carried !== null && PRIVATE.check(carried, "ipv4"));
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
 * literal is checked as it is. Resolution is bounded in time (`lookupHost`
 * is told to give up then). A name that does not resolve and one that resolves inside get
 * the same answer: the message tells no tenant what a name inside is. With
 * `allowPrivate`, nothing is refused.
 */
export async function resolveWebhookHost(
  host: string,
  {
    allowPrivate,
    timeoutMs = DNS_TIMEOUT_MS,
    lookupHost,
  }: { allowPrivate: boolean; timeoutMs?: number; lookupHost: HostLookup },
): Promise<{ address: string; family: 4 | 6 }[]> {
  const literal = isIP(host);
  if (literal) {
    if (!allowPrivate && isPrivateAddress(host)) throw new WebhookAddressError(`${host} is ${INTERNAL}`);
    return [{ address: host, family: literal as 4 | 6 }];
  }
  const found = await lookupWithin(host, timeoutMs, lookupHost).catch((err: unknown) => {
    if (allowPrivate || !(err instanceof NotResolved)) throw err;
    return null;
  });
  if (found && found.length > 0 && (allowPrivate || !found.some((a) => isPrivateAddress(a.address)))) return found;
  if (allowPrivate) throw new WebhookAddressError(`${host} does not resolve to any address`);
  throw new WebhookAddressError(
    `${host} does not resolve to public addresses only: it is not found, or is ${INTERNAL}`,
  );
}

const INTERNAL =
  "a loopback, private, link-local or otherwise internal address (set WEBHOOK_ALLOW_PRIVATE=true to allow them)";

/** A name the resolver did not answer for with addresses (not found, or not in time). */
class NotResolved extends WebhookAddressError {}

async function lookupWithin(
  host: string,
  timeoutMs: number,
  lookupHost: HostLookup,
): Promise<{ address: string; family: 4 | 6 }[]> {
  const deadline = AbortSignal.timeout(timeoutMs);
  // Bounded here too, whether or not the lookup heeds its signal.
  const late = new Promise<never>((_, reject) =>
    deadline.addEventListener(
      "abort",
      () => reject(new NotResolved(`${host} could not be resolved within ${timeoutMs} ms`)),
      { once: true },
    ),
  );
  try {
    const found = await Promise.race([lookupHost(host, { signal: deadline }), late]);
    return found.map((a) => ({ address: a.address, family: a.family === 6 ? 6 : 4 }));
  } catch (err) {
    if (err instanceof WebhookAddressError) throw err;
    if (deadline.aborted) throw new NotResolved(`${host} could not be resolved within ${timeoutMs} ms`);
    throw new NotResolved(
      `${host} could not be resolved (${(err as { code?: string }).code ?? (err as Error).message})`,
    );
  }
}
