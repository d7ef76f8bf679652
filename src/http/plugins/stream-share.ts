import { describeError } from "../../errors.js";
import type { Services } from "../../services.js";
import { createStreamGate } from "./stream-gate.js";

/** Publishes this instance's open streams per tenant and answers what every other instance holds per tenant. */
export type PublishStreams = (held: Map<string, number>) => Promise<Map<string, number>>;

/**
 * The stream gate, with each tenant's share (`MAX_STREAMS_PER_TENANT`)
 * counted on every instance of the database: this instance publishes what
 * it holds every `everyMs` (its heartbeat), and at once when a tenant at
 * half its share or more opens or closes one (one publish in flight at a
 * time, the latest counts going next), learning in the same transaction what
 * the others hold. A stream opened elsewhere counts here from the others'
 * next publish: at once near the share, at worst a heartbeat later. Without `publish` (the embedded database: one process),
 * the gate counts this process only.
 */
export function createSharedStreamGate({
  max,
  maxPerTenant,
  publish,
  everyMs = 1_000,
  onError = () => {},
}: {
  max: number;
  maxPerTenant: number;
  publish?: PublishStreams | undefined;
  /** @default 1000 */
  everyMs?: number;
  onError?: (err: unknown) => void;
}) {
  let others = new Map<string, number>();
  let inFlight: Promise<void> | null = null;
  let again = false;
  let closed = false;
  const sync = (): Promise<void> => {
    if (!publish || closed) return Promise.resolve();
    if (inFlight) {
      again = true;
      return inFlight;
    }
    inFlight = (async () => {
      do {
        again = false;
        try {
          others = await publish(gate.byTenant());
        } catch (err) {
          onError(err);
        }
      } while (again && !closed);
      inFlight = null;
    })();
    return inFlight;
  };
  const gate = createStreamGate({
    max,
    maxPerTenant,
    elsewhere: (tenant) => others.get(tenant) ?? 0,
    // Told at once only when the tenant nears its share (then every stream counts); else the heartbeat tells the others.
    onChange: (tenant) => {
      if ((gate.openOf(tenant) + (others.get(tenant) ?? 0)) * 2 >= maxPerTenant) void sync();
    },
  });
  const timer = publish ? setInterval(() => void sync(), everyMs) : null;
  timer?.unref();
  if (publish) void sync();
  return {
    gate,
    /** Publishes now, and resolves when what the others hold is known as of now. */
    sync,
    /** Stops publishing (call `withdraw` on the store after: the others stop counting this one's streams). */
    async close(): Promise<void> {
      if (timer) clearInterval(timer);
      await inFlight;
      closed = true;
    },
  };
}

/** This instance's stream gate: shared through the database on a server, this process's own on the embedded one. */
export function streamGateFor(
  { config, store, instanceId, log }: Pick<Services, "config" | "store" | "instanceId" | "log">,
  { shared }: { shared: boolean },
) {
  const share = createSharedStreamGate({
    max: config.server.maxStreams,
    maxPerTenant: config.fairShares.maxStreamsPerTenant,
    publish: shared ? (held) => store.sharedLimits.publishStreams(instanceId, held, STREAMS_FRESH_MS) : undefined,
    onError: (err) => log.warn({ err: describeError(err) }, "could not share this instance's open streams"),
  });
  return {
    ...share,
    async close(): Promise<void> {
      await share.close();
      if (shared) await store.sharedLimits.dropStreams(instanceId).catch(() => {});
    },
  };
}

/** How long what an instance published counts without a heartbeat (one killed stops counting then). */
const STREAMS_FRESH_MS = 5_000;
