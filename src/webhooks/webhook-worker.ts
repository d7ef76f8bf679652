import type { Log } from "../services.js";
import type { Store } from "../store/store.js";
import type { AttemptOutcome, ClaimedDelivery } from "../store/webhook-repository.js";
import { createWebhookAgents, postWebhook, type PostOutcome } from "./post-webhook.js";
import { tenantSigner } from "./tenant-webhook-secret.js";
import { createDeliveryShares } from "./delivery-shares.js";
import { webhookLookupsFor, type WebhookLookups } from "./webhook-lookups.js";
import { webhookBody } from "./webhook-body.js";
import type { WebhookSettings } from "./webhook-config.js";

export interface WebhookWorker {
  /** Claims what is due now, then whenever woken or the next retry is due. */
  start(): void;
  /** Wakes it: a delivery may be due (a trigger's NOTIFY). */
  wake(): void;
  /** Stops claiming, aborts the tries in flight and gives their deliveries back (due at once, for any instance). */
  close(): Promise<void>;
}

export interface WebhookWorkerOptions {
  store: Store;
  settings: WebhookSettings & { secret: string };
  log: Log;
  /** Each try's outcome (metrics). */
  onAttempt?: (outcome: PostOutcome) => void;
  /** A delivery's last word. */
  onSettled?: (status: "delivered" | "failed") => void;
  /** Tries in flight at once, and so the most claimed at a time. @default 8 */
  concurrency?: number;
  /** The longest it sleeps without looking (a lost nudge, another instance's retry). @default 5000 */
  idleMs?: number;
  /** @default Math.random */
  random?: () => number;
  /** Tries in flight at once to one receiver host (`WEBHOOK_MAX_INFLIGHT_PER_HOST`). @default 2 */
  maxInflightPerHost?: number;
  /** How long a host that keeps timing out is paused. @default 30000 */
  hostPauseMs?: number;
  /** Where names are resolved: the delivery pool, each tenant within its share. @default the system's DNS servers */
  lookups?: WebhookLookups;
}

/** The longest wait between two tries: past it, more tries keep coming hourly instead of months apart (or past what an interval holds). */
export const MAX_RETRY_DELAY_MS = 3_600_000;

/**
 * How long after its `attempt`-th failed try (from 1) a webhook is tried
 * again: `baseMs` doubled for each try before, at most an hour, ±20 % so
 * that receivers that failed together are not hit together again. With the
 * default 30 s, the first retry comes within 36 s and 8 tries span 51 to 76
 * minutes.
 */
export const retryDelayMs = (
  attempt: number,
  { baseMs, random = Math.random }: { baseMs: number; random?: () => number },
) => Math.round(Math.min(baseMs * 2 ** (attempt - 1), MAX_RETRY_DELAY_MS) * (0.8 + 0.4 * random()));

/**
 * Delivers the outbox (`webhook_deliveries`), each signed with its tenant's
 * secrets (never the master `WEBHOOK_SECRET` itself), on every instance at once:
 * each claims due rows under a lease (SKIP LOCKED, so instances share them),
 * POSTs each once, records the try, and schedules the next with exponential
 * backoff (±20 % jitter) until `maxAttempts`, then gives up (`failed`). A
 * process that dies mid-try leaves its claims to run out: at least once.
 */
export function createWebhookWorker({
  store,
  settings,
  log,
  onAttempt = () => {},
  onSettled = () => {},
  concurrency = 8,
  idleMs = 5_000,
  random = Math.random,
  maxInflightPerHost = 2,
  hostPauseMs,
  lookups = webhookLookupsFor([]),
}: WebhookWorkerOptions): WebhookWorker {
  const agents = createWebhookAgents({ maxSockets: concurrency });
  const shares = createDeliveryShares({ perHost: maxInflightPerHost, pauseMs: hostPauseMs });
  // Longer than any try (its lookup and its request each bounded by the timeout), so a live claim is not taken over.
  const leaseMs = 2 * settings.timeoutMs + 5_000;
  const inFlight = new Map<string, { abort: AbortController; done: Promise<void> }>();
  /** Deliveries whose try was aborted by `close`, to give back. */
  const given: string[] = [];
  let closed = false;
  let pumping = false;
  let again = false;
  let timer: NodeJS.Timeout | null = null;

  async function pump(): Promise<void> {
    if (closed) return;
    if (pumping) {
      again = true;
      return;
    }
    pumping = true;
    let wait = idleMs;
    // Due deliveries were left: slots full, hosts at their share or paused (a try's end or a reopening wakes it), or another instance's.
    let short: boolean;
    try {
      do {
        again = false;
        const free = concurrency - inFlight.size;
        short = free <= 0;
        if (short) break;
        const claimed = await store.webhooks.claim({ limit: free, leaseMs, shares: shares.forClaim() });
        for (const delivery of claimed) if (!closed) launch(delivery);
        // A full batch: there may be more due.
        short = claimed.length < free;
        again = !short;
      } while (again && !closed);
      const { nextDueInMs } = await store.webhooks.pending();
      if (nextDueInMs !== null && !(nextDueInMs === 0 && short)) wait = Math.min(idleMs, nextDueInMs);
      const reopens = shares.reopensInMs();
      if (reopens !== null) wait = Math.min(wait, reopens);
    } catch (err) {
      log.warn({ err }, "could not read the webhook outbox; trying again shortly");
    } finally {
      pumping = false;
    }
    schedule(again ? 0 : wait);
  }

  function schedule(ms: number) {
    if (closed) return;
    if (timer) clearTimeout(timer);
    timer = setTimeout(() => void pump(), Math.max(ms, 10));
    timer.unref();
  }

  function launch(delivery: ClaimedDelivery) {
    const abort = new AbortController();
    const end = shares.take(delivery);
    const done = attempt(delivery, abort.signal, end)
      .catch((err: unknown) => {
        if (abort.signal.aborted) given.push(delivery.id);
        else
          log.warn(
            { err, webhook_id: delivery.id },
            "could not record a webhook attempt; it is tried again when its claim runs out",
          );
      })
      .finally(() => {
        end(null);
        inFlight.delete(delivery.id);
        void pump();
      });
    inFlight.set(delivery.id, { abort, done });
  }

  async function attempt(
    delivery: ClaimedDelivery,
    signal: AbortSignal,
    ended: (outcome: PostOutcome) => void,
  ): Promise<void> {
    // Signed as it is sent, with the tenant's secrets of now: a delivery queued before a rotate verifies with the new one too.
    // The claim named the delivery's tenant: only its generations are read here.
    const signer = tenantSigner(settings.secret, {
      tenant: delivery.tenant,
      generations: await store.webhookSecrets.signing(delivery.tenant),
    });
    const at = new Date();
    const lookupHost = lookups.deliveries.of(delivery.tenant);
    const result = await postWebhook({
      url: delivery.url,
      id: delivery.id,
      body: webhookBody(delivery),
      signer,
      allowPrivate: settings.allowPrivate,
      timeoutMs: settings.timeoutMs,
      agents,
      lookupHost,
      signal,
    });
    ended(result.outcome);
    const tries = delivery.attempts.length + 1;
    const outcome: AttemptOutcome =
      result.outcome === "delivered"
        ? { status: "delivered" }
        : tries >= settings.maxAttempts
          ? { status: "failed" }
          : { status: "pending", retryInMs: retryDelayMs(tries, { baseMs: settings.retryBaseMs, random }) };
    await store.webhooks.record(
      delivery.id,
      { at: at.toISOString(), status_code: result.statusCode, error: result.error },
      outcome,
    );
    onAttempt(result.outcome);
    if (outcome.status === "pending") return;
    onSettled(outcome.status);
    if (outcome.status === "failed") {
      const target = new URL(delivery.url);
      log.warn(
        { webhook_id: delivery.id, url: `${target.origin}${target.pathname}`, attempts: tries, error: result.error },
        "webhook given up after its last attempt",
      );
    }
  }

  return {
    start: () => void pump(),
    wake: () => void pump(),
    async close() {
      closed = true;
      if (timer) clearTimeout(timer);
      const tries = [...inFlight.entries()];
      for (const [, { abort }] of tries) abort.abort(new Error("loopd is stopping"));
      await Promise.all(tries.map(([, { done }]) => done));
      await store.webhooks.release(given).catch(() => {});
      agents.destroy();
    },
  };
}
