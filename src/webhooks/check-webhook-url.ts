import type { Config } from "../config.js";
import { AppError } from "../errors.js";
import { hostOf, resolveWebhookHost, WebhookAddressError } from "./webhook-address.js";
import { webhookLookupsFor } from "./webhook-lookups.js";

/**
 * Refuses a webhook URL loopd must not POST to, as a 400 naming `field`:
 * not http(s); a server without `WEBHOOK_SECRET` (it sends nothing
 * unsigned); a host that is, or resolves to, a loopback, private or
 * link-local address (unless `WEBHOOK_ALLOW_PRIVATE=true`), or that does not
 * resolve (the lookup within `tenant`'s share of the request-time pool).
 * The delivery checks the addresses again when it connects.
 */
export async function checkWebhookUrl(
  url: string,
  { config, field, tenant }: { config: Config; field: string; tenant: string },
): Promise<void> {
  const parsed = URL.canParse(url) ? new URL(url) : null;
  if (!parsed || (parsed.protocol !== "http:" && parsed.protocol !== "https:")) {
    throw new AppError("invalid_request", `${field} must be an http:// or https:// URL`, { field });
  }
  const { secret, allowPrivate } = config.webhooks;
  if (!secret) {
    throw new AppError(
      "invalid_request",
      `${field}: this server sends no webhooks, as it has no WEBHOOK_SECRET to sign them with; its operator can set one`,
      { field },
    );
  }
  // With private addresses allowed nothing can be refused: no lookup.
  if (allowPrivate) return;
  try {
    await resolveWebhookHost(hostOf(parsed), {
      allowPrivate,
      lookupHost: webhookLookupsFor(config.fairShares.webhookDnsServers).checks.of(tenant),
    });
  } catch (err) {
    if (err instanceof WebhookAddressError)
      throw new AppError("invalid_request", `${field}: ${err.message}`, { field });
    throw err;
  }
}
