import type { FastifyInstance } from "fastify";
import type { Registry } from "prom-client";

/**
 * Prometheus text, without auth like /healthz. Left out of /openapi.json:
 * it is not JSON, and it is for the scraper, not for API clients.
 */
export function metricsRoutes(app: FastifyInstance, registry: Registry) {
  app.get("/metrics", { schema: { hide: true } }, async (_req, reply) => reply.type(registry.contentType).send(await registry.metrics()));
}
