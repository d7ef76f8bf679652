import type { ServerOptions } from "node:http";

/**
 * Fastify's options that make `REQUEST_TIMEOUT_MS` hold: Node ends a request
 * whose headers and body have not all arrived in `requestTimeout` (the
 * client error handler answers it `408` and closes the connection). Three
 * things it needs besides Fastify's own `requestTimeout`, each seen to fail
 * without it: the timeout given to the server's constructor too, with
 * `headersTimeout` no longer than it (set after construction, with Node's
 * 60 s `headersTimeout` above it, a trickling body was never timed out);
 * and a `connectionsCheckingInterval` well below it (Node looks for late
 * requests only that often, 30 s by default). Checking four times per
 * timeout, at most every second, keeps the overrun within a quarter of it.
 */
export const requestTimeoutOptions = (timeoutMs: number): { requestTimeout: number; http: ServerOptions } => ({
  requestTimeout: timeoutMs,
  http: {
    requestTimeout: timeoutMs,
    headersTimeout: Math.min(60_000, timeoutMs),
    connectionsCheckingInterval: Math.max(25, Math.min(1_000, Math.floor(timeoutMs / 4))),
  },
});
