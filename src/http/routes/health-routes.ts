import type { FastifyInstance } from "fastify";
import type { ZodTypeProvider } from "fastify-type-provider-zod";
import { z } from "zod";
import { DATABASE_BUSY, replyError } from "../plugins/error-handler.js";
import type { HttpDeps } from "../http-deps.js";
import { documented } from "../openapi.js";
import { errorAnswer } from "../schemas/errors.js";

const PROBES = new Set(["/healthz", "/readyz"]);

/** The probes' routes: answered while the server stops too, each with what it knows. */
export const isProbe = (routeUrl: string | undefined): boolean => routeUrl !== undefined && PROBES.has(routeUrl);

/** Why the process does not take new runs now, as `/readyz` says it. */
export type NotReady = "database" | "overloaded" | "shutting_down" | "starting";

const NOT_READY: Record<NotReady, string> = {
  database: "the database is unreachable",
  overloaded: "the server is overloaded: new runs are refused until it recovers",
  shutting_down: "the server is shutting down",
  starting: "the server is starting",
};

/**
 * Liveness and readiness apart: `/healthz` says the process is up and asks
 * nothing (a probe that restarts a busy process only makes it worse);
 * `/readyz` says whether it takes new runs now, and if not, why.
 */
export function healthRoutes(app: FastifyInstance, { ping, phase, services }: HttpDeps) {
  const r = app.withTypeProvider<ZodTypeProvider>();
  r.get(
    "/healthz",
    {
      schema: {
        summary: "Liveness",
        description:
          "200 while the process is up. Asks no database and is never refused by the overload guard: for a liveness probe.",
        operationId: "getHealth",
        tags: ["operations"],
        security: [],
        response: { 200: documented(z.object({ status: z.literal("ok") }), "The process is up", { status: "ok" }) },
      },
    },
    async () => ({ status: "ok" as const }),
  );

  r.get(
    "/readyz",
    {
      schema: {
        summary: "Readiness",
        description:
          "200 when the database answers and the process takes new runs; else 503 with `details.reason`: `database`, `overloaded`, `shutting_down` or `starting`. For a readiness probe or a load balancer.",
        operationId: "getReadiness",
        tags: ["operations"],
        security: [],
        response: {
          200: documented(z.object({ status: z.literal("ready") }), "Takes new runs", { status: "ready" }),
          503: errorAnswer(
            "`unavailable`: not ready now; `details.reason` says why (`database`, `overloaded`, `shutting_down`, `starting`)",
            "unavailable",
            "the database is unreachable",
            { reason: "database" },
          ),
        },
      },
    },
    async (_req, reply) => {
      const reason = await notReady({ ping, phase, overloaded: services.overload.overloaded });
      if (reason === null) return { status: "ready" as const };
      return replyError(reply, "unavailable", reason.message, { reason: reason.reason });
    },
  );
}

async function notReady({
  ping,
  phase,
  overloaded,
}: Pick<HttpDeps, "ping" | "phase"> & { overloaded: boolean }): Promise<{ reason: NotReady; message: string } | null> {
  const now = phase();
  const reason: NotReady | null =
    now === "stopping" ? "shutting_down" : now === "starting" ? "starting" : overloaded ? "overloaded" : null;
  if (reason) return { reason, message: NOT_READY[reason] };
  const health = await ping();
  if (health === "ok") return null;
  // A busy pool is not an unreachable database: the message says which.
  return { reason: "database", message: health === "busy" ? DATABASE_BUSY.message : NOT_READY.database };
}
