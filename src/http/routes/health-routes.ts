import type { FastifyInstance } from "fastify";
import type { ZodTypeProvider } from "fastify-type-provider-zod";
import { z } from "zod";
import { replyError } from "../error-handler.js";
import type { HttpDeps } from "../http-deps.js";
import { documented } from "../openapi.js";
import { errorAnswer } from "../error-schemas.js";

export function healthRoutes(app: FastifyInstance, { ping }: HttpDeps) {
  app.withTypeProvider<ZodTypeProvider>().get(
    "/healthz",
    {
      schema: {
        summary: "Health",
        description: "200 when the process is up and the database answers.",
        operationId: "getHealth",
        tags: ["operations"],
        security: [],
        response: {
          200: documented(z.object({ status: z.literal("ok") }), "Up, and the database answers", { status: "ok" }),
          503: errorAnswer("`unavailable`: the database is unreachable, or the process is overloaded or shutting down", "unavailable", "the database is unreachable"),
        },
      },
    },
    async (_req, reply) =>
      (await ping())
        ? { status: "ok" as const }
        : replyError(reply, "unavailable", "the database is unreachable"),
  );
}
