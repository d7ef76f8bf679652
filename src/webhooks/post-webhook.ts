import http from "node:http";
import https from "node:https";
import type { LookupAddress } from "node:dns";
import type { LookupFunction } from "node:net";
import type { Webhook } from "standardwebhooks";
import { causeCode } from "../tools/cause-code.js";
import { hostOf, resolveWebhookHost, WebhookAddressError } from "./webhook-address.js";
import type { HostLookup } from "./webhook-lookups.js";

/** How much of a receiver's answer is read (then dropped): enough to keep a small answer's connection for the next try. */
const ANSWER_BYTES = 4_096;

/** How one try ended: `delivered` (a 2xx) or why not; what metrics count. */
export type PostOutcome = "delivered" | "http_error" | "redirect" | "timeout" | "unreachable" | "refused";

export interface PostResult {
  outcome: PostOutcome;
  /** The receiver's status; null when it gave none. */
  statusCode: number | null;
  /** Null when delivered. */
  error: string | null;
}

/** Connections kept open to receivers between tries, one pool per scheme. */
export interface WebhookAgents {
  http: http.Agent;
  https: https.Agent;
  destroy(): void;
}

export function createWebhookAgents({ maxSockets }: { maxSockets: number }): WebhookAgents {
  const agents = {
    http: new http.Agent({ keepAlive: true, maxSockets }),
    https: new https.Agent({ keepAlive: true, maxSockets }),
  };
  return { ...agents, destroy: () => (agents.http.destroy(), agents.https.destroy()) };
}

/**
 * POSTs one webhook, signed the Standard Webhooks way, and says how it went.
 * The host's addresses are checked (unless `allowPrivate`) and the
 * connection is made to exactly those: the name is not resolved a second
 * time, so it cannot point elsewhere in between. Redirects are not followed
 * (a 3xx is a failed try); the whole try is bounded by `timeoutMs`, and at
 * most a few KB of the answer are read. Never throws but when `signal`
 * aborts (a worker stopping).
 */
export async function postWebhook({
  url,
  id,
  body,
  signer,
  allowPrivate,
  timeoutMs,
  agents,
  lookupHost,
  signal,
  now = () => new Date(),
}: {
  url: string;
  /** The `webhook-id`. */
  id: string;
  body: string;
  /** One secret's `Webhook`, or one that signs with several (a tenant's, around a rotate). */
  signer: Pick<Webhook, "sign">;
  allowPrivate: boolean;
  timeoutMs: number;
  agents: WebhookAgents;
  /** How the host's name is resolved (the delivery pool, within the tenant's share). */
  lookupHost: HostLookup;
  signal: AbortSignal;
  now?: () => Date;
}): Promise<PostResult> {
  const target = new URL(url);
  const deadline = AbortSignal.timeout(timeoutMs);
  let addresses: LookupAddress[];
  try {
    addresses = await resolveWebhookHost(hostOf(target), { allowPrivate, timeoutMs, lookupHost });
  } catch (err) {
    if (!(err instanceof WebhookAddressError)) throw err;
    return { outcome: "refused", statusCode: null, error: `not sent: ${err.message}` };
  }
  const at = now();
  const headers = {
    "content-type": "application/json",
    "user-agent": "loopd-webhooks",
    "webhook-id": id,
    "webhook-timestamp": String(Math.floor(at.getTime() / 1000)),
    "webhook-signature": signer.sign(id, at, body),
  };
  const secure = target.protocol === "https:";
  // Only the addresses checked above; an IP literal is connected to as it is, without a lookup.
  const lookup: LookupFunction = (_host, options, callback) =>
    options.all ? callback(null, addresses) : callback(null, addresses[0]!.address, addresses[0]!.family);
  try {
    const status = await send(
      secure ? https : http,
      target,
      {
        method: "POST",
        headers,
        agent: secure ? agents.https : agents.http,
        signal: AbortSignal.any([signal, deadline]),
        lookup,
      },
      body,
    );
    if (status >= 200 && status < 300) return { outcome: "delivered", statusCode: status, error: null };
    if (status >= 300 && status < 400)
      return { outcome: "redirect", statusCode: status, error: `HTTP ${status}: redirects are not followed` };
    return { outcome: "http_error", statusCode: status, error: `HTTP ${status}` };
  } catch (err) {
    if (signal.aborted) throw signal.reason;
    if (deadline.aborted) return { outcome: "timeout", statusCode: null, error: `timed out after ${timeoutMs} ms` };
    return {
      outcome: "unreachable",
      statusCode: null,
      error: `could not reach ${target.host} (${causeCode(err) ?? (err as Error).message})`,
    };
  }
}

/**
 * One request; resolves with the answer's status as soon as it comes (a
 * receiver that took the webhook has taken it, however slowly its body
 * follows). The body is read on, up to a little, so that the connection can
 * serve the next request; past that, or at the try's deadline, it is closed.
 */
function send(
  client: typeof http | typeof https,
  target: URL,
  options: http.RequestOptions,
  body: string,
): Promise<number> {
  return new Promise((resolve, reject) => {
    const req = client.request(target, options, (res) => {
      resolve(res.statusCode ?? 0);
      let read = 0;
      res.on("data", (chunk: Buffer) => {
        read += chunk.length;
        // Past the cap the connection goes: the answer is not wanted.
        if (read > ANSWER_BYTES) res.destroy();
      });
      // Settled already: what becomes of the rest of the body changes nothing.
      res.on("error", () => {});
    });
    req.on("error", reject);
    req.end(body);
  });
}
