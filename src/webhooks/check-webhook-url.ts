import type { Config } from "../config.js";
import { AppError } from "../errors.js";

/**
 * Refuses a webhook URL loopd must not POST to: not http(s). (The address
 * checks — loopback, private, link-local, after DNS resolution — come with
 * the delivery worker.)
 */
export async function checkWebhookUrl(url: string, { field }: { config: Config; field: string }): Promise<void> {
  const parsed = URL.canParse(url) ? new URL(url) : null;
  if (!parsed || (parsed.protocol !== "http:" && parsed.protocol !== "https:")) {
    throw new AppError("invalid_request", `${field} must be an http:// or https:// URL`, { field });
  }
}
