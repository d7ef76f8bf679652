import type { FastifyInstance } from "fastify";
import type { Registry } from "prom-client";
import { plainText } from "../openapi.js";

const EXAMPLE = [
  "# HELP loopd_runs_ended_total Runs that ended, by status and stop reason.",
  "# TYPE loopd_runs_ended_total counter",
  'loopd_runs_ended_total{status="completed",stop_reason="end_turn"} 12',
  "",
].join("\n");

/** Prometheus text, without auth like /healthz; for the scraper rather than for API clients. */
export function metricsRoutes(app: FastifyInstance, registry: Registry) {
  app.get(
    "/metrics",
    {
      schema: {
        summary: "Prometheus metrics",
        description:
          "Runs by status and stop reason, model calls, tokens and cost by provider and model, model-call, time-to-first-token and tool-call latency histograms, active and paused runs, open streams, database pool use, process metrics. Open, or with `METRICS_TOKEN` set, for `Authorization: Bearer <METRICS_TOKEN>` only.",
        operationId: "getMetrics",
        // Its own token (METRICS_TOKEN), not an API key.
        security: [],
        tags: ["operations"],
        response: { 200: plainText("Prometheus text exposition format", EXAMPLE) },
      },
      // The text is sent as it is.
      serializerCompiler: () => (data) => data as string,
    },
    async (_req, reply) => reply.type(registry.contentType).send(await registry.metrics()),
  );
}
