import rateLimit from "@fastify/rate-limit";
import type { FastifyInstance } from "fastify";
import { AppError } from "../../errors.js";
import type { Services } from "../../services.js";
import type { Database } from "../../store/db.js";

/** Counts a request of a key in its window: the requests in it so far (this one included) and the time left in it. */
export type CountHit = (key: string, windowMs: number) => Promise<{ current: number; ttlMs: number }>;

/** On a server, hits counted in the database, so that every instance counts the same window; none embedded (one process). */
export function sharedHits({ store }: Pick<Services, "store">, { kind }: Pick<Database, "kind">): CountHit | undefined {
  return kind === "postgres" ? (key, ms) => store.sharedLimits.hit(key, ms) : undefined;
}

/**
 * `RATE_LIMIT_PER_MIN` per API key (`@fastify/rate-limit`, counted by
 * `countHit` in the database, so every instance counts the same window;
 * without it, in this process): `x-ratelimit-limit`, `-remaining` and `-reset` (seconds from
 * now) on every answer of a keyed request, `429 rate_limited` with
 * `Retry-After` past it. Requests without a key (the open routes) are not
 * counted. Checked right after the key, before the body is read or
 * validated: a refused request counts too. A count that fails (the
 * database is down) lets the request through: what it asks for fails on its own.
 */
export async function useRateLimit(
  app: FastifyInstance,
  { perMinute, countHit }: { perMinute: number; countHit?: CountHit | undefined },
): Promise<void> {
  await app.register(rateLimit, {
    ...(countHit && { store: sharedStore(countHit), skipOnError: true }),
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

/** A store of `@fastify/rate-limit` over `countHit` (the plugin makes one per route group: `child` is the same one). */
function sharedStore(countHit: CountHit) {
  return class SharedStore {
    incr(
      key: string,
      done: (err: Error | null, result?: { current: number; ttl: number }) => void,
      timeWindow: number,
    ): void {
      countHit(key, timeWindow).then(
        ({ current, ttlMs }) => done(null, { current, ttl: ttlMs }),
        (err: unknown) => done(err instanceof Error ? err : new Error(String(err))),
      );
    }
    child(): this {
      return this;
    }
  };
}
