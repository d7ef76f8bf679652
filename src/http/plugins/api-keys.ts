import { createHash, timingSafeEqual } from "node:crypto";
import type { FastifyInstance, FastifyRequest } from "fastify";
import { replyError } from "./error-handler.js";
import type { KeyCheck } from "./key-check.js";

/** Routes anyone may call: health, the API's description and its reference page, the playground's page and assets (the page asks for a key). */
const OPEN = [/^\/(healthz|readyz)$/, /^\/openapi\.json$/, /^\/docs(\/.*)?$/, /^\/$/, /^\/assets\/[^/]+$/];

/** The key a request presents: `Authorization: Bearer <key>`, or `x-api-key: <key>`. */
export function presentedKey(req: FastifyRequest): string | null {
  const auth = req.headers.authorization;
  if (typeof auth === "string") {
    const match = /^Bearer\s+(\S+)\s*$/i.exec(auth);
    if (match) return match[1]!;
  }
  const header = req.headers["x-api-key"];
  return typeof header === "string" && header.trim() !== "" ? header.trim() : null;
}

/** Whether a request presents exactly `token` (compared in constant time). */
export function presentsToken(req: FastifyRequest, token: string): boolean {
  const presented = presentedKey(req);
  if (presented === null) return false;
  const digest = (s: string) => createHash("sha256").update(s).digest();
  return timingSafeEqual(digest(presented), digest(token));
}

/**
 * API keys: with `required`, every request but the open routes, CORS
 * preflights, `/metrics` (its own token) and `/admin/` (the admin token,
 * checked by its routes) needs a live key, and acts as the key's tenant.
 * Without, every request acts as the tenant `default`.
 */
export function useApiKeys(
  app: FastifyInstance,
  { required, keys, metricsToken }: { required: boolean; keys: KeyCheck; metricsToken: string | null },
): void {
  app.addHook("onRequest", async (req, reply) => {
    if (req.method === "OPTIONS") return;
    const path = req.url.split("?", 1)[0]!;
    if (OPEN.some((open) => open.test(path))) return;
    if (path === "/metrics") {
      if (metricsToken !== null && !presentsToken(req, metricsToken))
        return replyError(reply, "unauthorized", "/metrics needs Authorization: Bearer <METRICS_TOKEN>");
      return;
    }
    if (path === "/admin" || path.startsWith("/admin/") || !required) return;
    const key = presentedKey(req);
    if (key === null)
      return replyError(
        reply,
        "unauthorized",
        "an API key is required: send Authorization: Bearer <key> or x-api-key: <key> (npm run keys -- create --tenant <name> makes one)",
      );
    const owner = await keys.ownerOf(key);
    if (owner === null) return replyError(reply, "unauthorized", "the API key is unknown or revoked");
    req.tenant = owner.tenant;
    req.keyId = owner.keyId;
  });
}
