import rateLimit from "@fastify/rate-limit";
import type { FastifyInstance } from "fastify";
import { AppError } from "../../errors.js";

/**
 * `RATE_LIMIT_PER_MIN` per API key (`@fastify/rate-limit`, counted in this
 * process): `x-ratelimit-limit`, `-remaining` and `-reset` (seconds from
 * now) on every answer of a keyed request, `429 rate_limited` with
 * `Retry-After` past it. Requests without a key (the open routes) are not
 * counted. Checked right after the key, before the body is read or
 * validated: a refused request counts too. Counted per process (with
 * several instances, a key gets the limit at each).
 */
export async function useRateLimit(app: FastifyInstance, { perMinute }: { perMinute: number }): Promise<void> {
  await app.register(rateLimit, {
    global: true,
    // Route hooks run after the global key check: the key is known, and a request is counted before its body is read or checked.
    hook: "onRequest",
    max: perMinute,
    timeWindow: 60_000,
    keyGenerator: (req) => req.keyId ?? "",
    allowList: (req) => req.keyId === null,
    // Thrown by the plugin, answered by the error handler in the contract's shape (the headers are set already).
    errorResponseBuilder: (_req, context) =>
      new AppError(
        "rate_limited",
        `more than ${context.max} requests a minute with this API key; try again in ${Math.ceil(context.ttl / 1000)} s`,
        { limit: context.max, retry_after_s: Math.ceil(context.ttl / 1000) },
      ),
  });
}
