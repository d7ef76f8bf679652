import { z } from "zod";
import { blank, booleanFromEnv, intFromEnv } from "../util/env-values.js";
import { webhookSecret } from "../util/webhook-secret.js";

/** The variables of run webhooks (composed into config.ts's). */
export const webhookVariables = {
  /** `whsec_…`: the master each tenant's webhook secret is derived from (never given out); unset, webhooks are refused (400) and none is sent. */
  WEBHOOK_SECRET: z.preprocess((v) => (blank(v) ? undefined : v), webhookSecret.optional()),
  WEBHOOK_MAX_ATTEMPTS: intFromEnv(8, { max: 50 }),
  /** true: webhook URLs may reach loopback, private and link-local addresses (a receiver on this machine or network). */
  WEBHOOK_ALLOW_PRIVATE: booleanFromEnv("false"),
  /** The most one try may take: connecting, the answer's status and the little of its body that is read. */
  WEBHOOK_TIMEOUT_MS: intFromEnv(10_000, { max: 300_000 }),
  /** The first retry's delay; each next one doubles, ±20 %. 30 s: 8 tries span about an hour. */
  WEBHOOK_RETRY_BASE_MS: intFromEnv(30_000, { max: 3_600_000 }),
};

type WebhookVariables = z.output<z.ZodObject<typeof webhookVariables>>;

export function webhookSettingsOf(e: WebhookVariables) {
  return {
    /** Null: no webhook is accepted, and none is sent (never one unsigned). */
    secret: e.WEBHOOK_SECRET ?? null,
    maxAttempts: e.WEBHOOK_MAX_ATTEMPTS,
    allowPrivate: e.WEBHOOK_ALLOW_PRIVATE === "true",
    timeoutMs: e.WEBHOOK_TIMEOUT_MS,
    retryBaseMs: e.WEBHOOK_RETRY_BASE_MS,
  };
}

export type WebhookSettings = ReturnType<typeof webhookSettingsOf>;
