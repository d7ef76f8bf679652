import { receiverHostOf, type ClaimShares } from "../store/fair-webhook-claim.js";
import type { PostOutcome } from "./post-webhook.js";

/** Timeouts in a row after which a receiver host is paused. */
export const TIMEOUTS_TO_PAUSE = 3;

/**
 * What one worker has in flight, per receiver host and per tenant, and the
 * hosts it pauses: the claim takes deliveries round-robin across tenants and
 * at most `perHost` tries in flight to one host. A host whose tries time out
 * `TIMEOUTS_TO_PAUSE` times in a row is paused for `pauseMs` (its due
 * deliveries are not claimed: they wait in the outbox, holding no worker),
 * then let through one try at a time until one does not time out. Counted
 * per instance: several instances each hold up to `perHost` to a host.
 */
export function createDeliveryShares({
  perHost,
  pauseMs = 30_000,
  now = Date.now,
}: {
  perHost: number;
  pauseMs?: number;
  now?: () => number;
}) {
  const hosts = new Map<string, { inFlight: number; timeouts: number; pausedUntil: number }>();
  const tenants = new Map<string, number>();
  const hostOf = (host: string) =>
    hosts.get(host) ?? hosts.set(host, { inFlight: 0, timeouts: 0, pausedUntil: 0 }).get(host)!;
  const forget = (host: string) => {
    const h = hosts.get(host);
    if (h && h.inFlight === 0 && h.timeouts === 0) hosts.delete(host);
  };
  return {
    /** What the next claim must leave out: a paused host counts full, a host on trial after its pause has one place. */
    forClaim(): ClaimShares {
      const at = now();
      const held: Record<string, number> = {};
      for (const [host, h] of hosts) {
        held[host] =
          at < h.pausedUntil
            ? perHost
            : h.timeouts >= TIMEOUTS_TO_PAUSE
              ? Math.max(h.inFlight, perHost - 1)
              : h.inFlight;
      }
      return { hosts: held, tenants: Object.fromEntries(tenants), perHost };
    },
    /** Counts a claimed delivery's try as in flight; the function returned ends it with its outcome (null: it did not end, the worker stopped). */
    take({ url, tenant }: { url: string; tenant: string }): (outcome: PostOutcome | null) => void {
      const host = receiverHostOf(url);
      hostOf(host).inFlight++;
      tenants.set(tenant, (tenants.get(tenant) ?? 0) + 1);
      let ended = false;
      return (outcome) => {
        if (ended) return;
        ended = true;
        const h = hostOf(host);
        h.inFlight--;
        const left = (tenants.get(tenant) ?? 1) - 1;
        if (left === 0) tenants.delete(tenant);
        else tenants.set(tenant, left);
        if (outcome === "timeout") {
          h.timeouts++;
          if (h.timeouts >= TIMEOUTS_TO_PAUSE) h.pausedUntil = now() + pauseMs;
        } else if (outcome !== null) {
          h.timeouts = 0;
          h.pausedUntil = 0;
        }
        forget(host);
      };
    },
    /** How soon the first paused host may be tried again (ms), or null when none is paused. */
    reopensInMs(): number | null {
      const at = now();
      const ends = [...hosts.values()].filter((h) => h.pausedUntil > at).map((h) => h.pausedUntil - at);
      return ends.length > 0 ? Math.min(...ends) : null;
    },
  };
}

export type DeliveryShares = ReturnType<typeof createDeliveryShares>;
