import type { FastifyInstance } from "fastify";
import type { ZodTypeProvider } from "fastify-type-provider-zod";
import { z } from "zod";
import { DATABASE_BUSY, replyError } from "../error-handler.js";
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
          503: errorAnswer("`unavailable`: the database is unreachable, or busy (every pooled connection stayed in use: `details.reason` `database_busy`), or the process is overloaded or shutting down", "unavailable", "the database is unreachable"),
        },
      },
    },
    async (_req, reply) => {
      const health = await ping();
      if (health === "ok") return { status: "ok" as const };
      if (health === "busy") return replyError(reply, "unavailable", DATABASE_BUSY.message, DATABASE_BUSY.details);
      return replyError(reply, "unavailable", "the database is unreachable");
    },
  );
}
