import type { FastifyInstance } from "fastify";
import type { ZodTypeProvider } from "fastify-type-provider-zod";
import { z } from "zod";
import { replyError } from "../error-handler.js";
import type { HttpDeps } from "../http-deps.js";
import { errorSchema } from "../schemas.js";

export function healthRoutes(app: FastifyInstance, { ping }: HttpDeps) {
  app.withTypeProvider<ZodTypeProvider>().get(
    "/healthz",
    { schema: { response: { 200: z.object({ status: z.literal("ok") }), 503: errorSchema } } },
    async (_req, reply) =>
      (await ping())
        ? { status: "ok" as const }
        : replyError(reply, "unavailable", "the database is unreachable"),
  );
}
