import type { Services } from "../services.js";
import type { Metrics } from "../telemetry/metrics.js";
import { createWebhookWorker, type WebhookWorker } from "./webhook-worker.js";
import { webhookLookupsFor } from "./webhook-lookups.js";

/**
 * This instance's delivery worker (the app wakes it on the outbox trigger's NOTIFY).
 * Without `WEBHOOK_SECRET` there is none (loopd sends nothing unsigned, and
 * refuses new webhooks): deliveries left pending from before wait for a
 * start with the secret, which a warning says once.
 */
export function startWebhooks(
  services: Services,
  { metrics }: { metrics: Pick<Metrics, "webhookAttempted" | "webhookSettled"> },
): WebhookWorker | null {
  const { config, store } = services;
  const { log } = services;
  const { secret } = config.webhooks;
  if (!secret) {
    void store.webhooks.pending().then(
      ({ oldestAgeMs }) =>
        oldestAgeMs !== null &&
        log.warn({}, "webhook deliveries are pending, but none is sent: WEBHOOK_SECRET is not set"),
      () => {},
    );
    return null;
  }
  const worker = createWebhookWorker({
    store,
    settings: { ...config.webhooks, secret },
    log,
    onAttempt: (outcome) => metrics.webhookAttempted(outcome),
    onSettled: (status) => metrics.webhookSettled(status),
    maxInflightPerHost: config.fairShares.webhookMaxInflightPerHost,
    lookups: webhookLookupsFor(config.fairShares.webhookDnsServers),
    // Without LISTEN for good, the outbox's trigger reaches nobody: look for new deliveries at POLL_INTERVAL_MS.
    ...(services.broadcast.fallbackPollMs !== null && { idleMs: services.broadcast.fallbackPollMs }),
  });
  worker.start();
  return worker;
}
