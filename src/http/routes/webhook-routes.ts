import type { FastifyInstance } from "fastify";
import type { ZodTypeProvider } from "fastify-type-provider-zod";
import { z } from "zod";
import type { WebhookDeliveryRow } from "../../store/schema.js";
import { WEBHOOK_EVENTS } from "../../store/schema.js";
import type { HttpDeps } from "../http-deps.js";
import { documented } from "../openapi.js";
import { runParams } from "../request-schemas.js";
import { errorResponses } from "../error-schemas.js";

const webhookDelivery = z.object({
  id: z.string().describe("The `webhook-id` it is sent with, the same on every try: `<run_id>.<type>` (a run's later pauses: `<run_id>.run.requires_action.2`, `.3`, …)"),
  type: z.enum(WEBHOOK_EVENTS),
  url: z.string(),
  status: z.enum(["pending", "delivered", "failed"]).describe("`pending` until a 2xx answer (`delivered`) or the last of `WEBHOOK_MAX_ATTEMPTS` tries (`failed`)"),
  attempts: z
    .array(
      z.object({
        at: z.string().describe("When the try began"),
        status_code: z.number().int().nullable().describe("The receiver's status; null when it gave none (a timeout, a refused connection)"),
        error: z.string().nullable().describe("Why it did not deliver; null for a 2xx"),
      }),
    )
    .describe("Oldest first"),
});

const RUN_ID = "run_0mx3f31q8z4nmoh047w3m0999";
const deliveries = documented(z.object({ data: z.array(webhookDelivery) }), "The run's webhook deliveries, oldest first, each with its tries", {
  data: [
    {
      id: `${RUN_ID}.run.completed`,
      type: "run.completed",
      url: "https://example.com/hooks/loopd",
      status: "delivered",
      attempts: [
        { at: "2026-01-05T10:00:02.120Z", status_code: 503, error: "HTTP 503" },
        { at: "2026-01-05T10:00:33.480Z", status_code: 200, error: null },
      ],
    },
  ],
});

const presentDelivery = (row: WebhookDeliveryRow): z.output<typeof webhookDelivery> => ({
  id: row.id,
  type: row.type,
  url: row.url,
  status: row.status,
  attempts: row.attempts,
});

export function webhookRoutes(app: FastifyInstance, { services, conversations }: HttpDeps) {
  app.withTypeProvider<ZodTypeProvider>().get(
    "/conversations/:id/runs/:run_id/webhooks",
    {
      schema: {
        summary: "List a run's webhook deliveries",
        description:
          "Each end (or pause) of the run its webhook was sent for: the `webhook-id`, where, whether it was delivered, and every try with the receiver's status. " +
          "Deliveries are retried with exponential backoff until a 2xx or `WEBHOOK_MAX_ATTEMPTS`. A run without a webhook has none.",
        operationId: "listRunWebhooks",
        tags: ["runs"],
        params: runParams,
        response: { 200: deliveries, ...errorResponses },
      },
    },
    async (req) => {
      // The run first: an unknown one, or another tenant's, is a 404 as on every run route.
      await conversations.run({ tenant: req.tenant, id: req.params.id, runId: req.params.run_id });
      return { data: (await services.store.webhooks.ofRun(req.tenant, req.params.run_id)).map(presentDelivery) };
    },
  );
}
