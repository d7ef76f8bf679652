import type { FastifyInstance } from "fastify";
import type { ZodTypeProvider } from "fastify-type-provider-zod";
import { z } from "zod";
import type { HttpDeps } from "../http-deps.js";
import { documented } from "../openapi.js";
import { requestErrorResponses } from "../schemas/errors.js";

const modelHealthSchema = z.object({
  provider: z.string(),
  model: z.string(),
  base_url_host: z.string().describe("The server its calls go to: one circuit per provider, model and server"),
  state: z
    .enum(["ok", "cooling_down", "probing"])
    .describe("`cooling_down`: skipped (steps go to their next model) until `until`; `probing`: one call is trying it"),
  consecutive_failures: z.number().int(),
  last_error: z.object({ status: z.number().int().nullable(), message: z.string(), at: z.string() }).nullable(),
  until: z.string().nullable(),
});

export function modelRoutes(app: FastifyInstance, { services: { modelCooldown } }: HttpDeps) {
  app.withTypeProvider<ZodTypeProvider>().get(
    "/models/health",
    {
      schema: {
        summary: "How the models this instance called are doing",
        description:
          "Each model this instance has called (per provider, model and server) and its circuit: after `MODEL_COOLDOWN_AFTER` failed attempts in a row within a minute it is `cooling_down` (skipped) for `MODEL_COOLDOWN_MS`, then one call probes it (`probing`): success makes it `ok`, failure cools it down again. Per instance, kept in memory.",
        operationId: "listModelHealth",
        tags: ["operations"],
        response: {
          200: documented(z.object({ data: z.array(modelHealthSchema) }), "The models", {
            data: [
              {
                provider: "anthropic",
                model: "claude-sonnet-4-5",
                base_url_host: "api.anthropic.com",
                state: "cooling_down",
                consecutive_failures: 5,
                last_error: { status: 529, message: "Overloaded", at: "2026-11-30T15:22:42.176Z" },
                until: "2026-11-30T15:23:12.176Z",
              },
            ],
          }),
          ...requestErrorResponses,
        },
      },
    },
    // The models are the server's, shared by every tenant; errors are the providers' words, never a request's content.
    async () => ({ data: modelCooldown.list() }),
  );
}
