import type { FastifyInstance } from "fastify";
import type { ZodTypeProvider } from "fastify-type-provider-zod";
import { z } from "zod";
import type { WebhookDeliveryRow } from "../../store/schema.js";
import { WEBHOOK_EVENTS } from "../../store/schema.js";
import type { HttpDeps } from "../http-deps.js";
import { documented } from "../openapi.js";
import { runParams } from "../schemas/runs.js";
import { errorAnswer, errorResponses, requestErrorResponses } from "../schemas/errors.js";
import { AppError } from "../../errors.js";
import { tenantWebhookSecret } from "../../webhooks/tenant-webhook-secret.js";

const webhookDelivery = z.object({
  id: z
    .string()
    .describe(
      "The `webhook-id` it is sent with, the same on every try: `<run_id>.<type>` (a run's later pauses: `<run_id>.run.requires_action.2`, `.3`, …)",
    ),
  type: z.enum(WEBHOOK_EVENTS),
  url: z.string(),
  status: z
    .enum(["pending", "delivered", "failed"])
    .describe("`pending` until a 2xx answer (`delivered`) or the last of `WEBHOOK_MAX_ATTEMPTS` tries (`failed`)"),
  attempts: z
    .array(
      z.object({
        at: z.string().describe("When the try began"),
        status_code: z
          .number()
          .int()
          .nullable()
          .describe("The receiver's status; null when it gave none (a timeout, a refused connection)"),
        error: z.string().nullable().describe("Why it did not deliver; null for a 2xx"),
      }),
    )
    .describe("Oldest first"),
});

const RUN_ID = "run_0mx3f31q8z4nmoh047w3m0999";
const deliveries = documented(
  z.object({ data: z.array(webhookDelivery) }),
  "The run's webhook deliveries, oldest first, each with its tries",
  {
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
  },
);

const presentDelivery = (row: WebhookDeliveryRow): z.output<typeof webhookDelivery> => ({
  id: row.id,
  type: row.type,
  url: row.url,
  status: row.status,
  attempts: row.attempts,
});

const secretAnswer = z.object({
  secret: z.string().describe("`whsec_…`: verify this tenant's webhooks with it, with any Standard Webhooks library"),
});
const SECRET_EXAMPLE = { secret: "whsec_9xG0cQk3yq1m0bJ6N0yq8sQh1nq9Lh2b1a0Xw5Jc3Vw=" };
const NO_WEBHOOKS =
  "this server sends no webhooks, as it has no WEBHOOK_SECRET to sign them with; its operator can set one";
const secretResponses = {
  ...requestErrorResponses,
  404: errorAnswer(
    "`not_found`: this server sends no webhooks (no `WEBHOOK_SECRET`), so there is no secret",
    "not_found",
    NO_WEBHOOKS,
  ),
};

export function webhookRoutes(app: FastifyInstance, { services, conversations }: HttpDeps) {
  const { webhookSecrets } = services.store;
  /** The master, or the contract's 404 when webhooks are off (a secret that signs nothing would only mislead). */
  const masterSecret = (): string => {
    const master = services.config.webhooks.secret;
    if (!master) throw new AppError("not_found", NO_WEBHOOKS);
    return master;
  };
  const typed = app.withTypeProvider<ZodTypeProvider>();
  typed.get(
    "/webhooks/secret",
    {
      schema: {
        summary: "Get the tenant's webhook secret",
        description:
          "The secret the caller's tenant verifies its webhooks with: each tenant has its own, derived from `WEBHOOK_SECRET` (which is never given out), so no tenant can sign, or verify, another's. " +
          "After a rotate, the secret it replaced keeps signing for 24 h more: each webhook carries a signature for each, and a receiver verifies with either.",
        operationId: "getWebhookSecret",
        tags: ["webhooks"],
        response: {
          200: documented(secretAnswer, "The caller's current webhook secret", SECRET_EXAMPLE),
          ...secretResponses,
        },
      },
    },
    async (req) => {
      const master = masterSecret();
      const [generation] = await webhookSecrets.signing(req.tenant);
      return { secret: tenantWebhookSecret(master, { tenant: req.tenant, generation: generation! }) };
    },
  );
  typed.post(
    "/webhooks/secret/rotate",
    {
      schema: {
        summary: "Rotate the tenant's webhook secret",
        description:
          "Makes a new secret the caller's tenant's and answers it. Webhooks sent from now on (retries of older ones too) are signed with the new one and, for 24 h more, also with the one it replaced, so a receiver can switch without losing any. " +
          "Rotating again within the day keeps the earlier ones signing too, up to the last three replaced.",
        operationId: "rotateWebhookSecret",
        tags: ["webhooks"],
        response: {
          200: documented(secretAnswer, "The caller's new webhook secret", SECRET_EXAMPLE),
          ...secretResponses,
        },
      },
    },
    async (req) => {
      const master = masterSecret();
      const generation = await webhookSecrets.rotate(req.tenant);
      req.log.info({ tenant: req.tenant, generation }, "webhook secret rotated");
      return { secret: tenantWebhookSecret(master, { tenant: req.tenant, generation }) };
    },
  );
  typed.get(
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
