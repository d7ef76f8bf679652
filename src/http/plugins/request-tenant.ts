import type { FastifyInstance } from "fastify";

declare module "fastify" {
  interface FastifyRequest {
    /** Whose data the request may see: the tenant of its API key, or `default` when keys are off. */
    tenant: string;
    /** The API key it presented, when keys are on. */
    keyId: string | null;
  }
}

/** The tenant of requests when API keys are off. */
export const DEFAULT_TENANT = "default";

/** Every request has a tenant, `default` until the key check says otherwise. */
export function useRequestTenant(app: FastifyInstance): void {
  app.decorateRequest("tenant", DEFAULT_TENANT);
  app.decorateRequest("keyId", null);
}
