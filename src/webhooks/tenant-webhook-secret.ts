import { createHmac } from "node:crypto";
import { Webhook } from "standardwebhooks";

const PREFIX = "whsec_";

/**
 * A tenant's webhook secret of one generation, derived from the master
 * `WEBHOOK_SECRET`: `whsec_` + base64 of HMAC-SHA256(master's key,
 * `loopd-webhook:<tenant>:<generation>`), 32 bytes as Standard Webhooks
 * libraries take them. Derived, not stored: nothing secret sits in the
 * database, every instance computes the same one, and no tenant's secret
 * tells anything of another's or of the master (HMAC is a PRF).
 */
export function tenantWebhookSecret(
  master: string,
  { tenant, generation }: { tenant: string; generation: number },
): string {
  const key = Buffer.from(master.startsWith(PREFIX) ? master.slice(PREFIX.length) : master, "base64");
  // The tenant name cannot hold ":" (TENANT_NAME), so no two (tenant, generation) pairs give the same input.
  return PREFIX + createHmac("sha256", key).update(`loopd-webhook:${tenant}:${generation}`).digest("base64");
}

/**
 * Signs with every secret of `generations` (the current one and those a
 * rotate replaced within the day), space-separated in one `webhook-signature`
 * as Standard Webhooks allow: a receiver verifies with whichever it holds.
 */
export function tenantSigner(
  master: string,
  { tenant, generations }: { tenant: string; generations: readonly number[] },
): Pick<Webhook, "sign"> {
  const signers = generations.map((generation) => new Webhook(tenantWebhookSecret(master, { tenant, generation })));
  return { sign: (id, at, body) => signers.map((s) => s.sign(id, at, body)).join(" ") };
}
