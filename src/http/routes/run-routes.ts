import type { FastifyInstance } from "fastify";
import type { ZodTypeProvider } from "fastify-type-provider-zod";
import { z } from "zod";
import { cancelRun } from "../../runs/cancel-run.js";
import { presentRun } from "../../conversations/present.js";
import { AppError } from "../../errors.js";
import type { HttpDeps } from "../http-deps.js";
import { conversationParams, errorResponses, eventsQuery, listQuery, pageOf, runParams, runSchema } from "../schemas.js";
import { streamRunEvents } from "../sse.js";

export function runRoutes(app: FastifyInstance, deps: HttpDeps) {
  const { services, conversations, runs } = deps;
  const r = app.withTypeProvider<ZodTypeProvider>();

  r.get(
    "/conversations/:id/runs",
    { schema: { params: conversationParams, querystring: listQuery, response: { 200: pageOf(runSchema), ...errorResponses } } },
    (req) => conversations.runs({ id: req.params.id, ...req.query }),
  );

  r.get("/conversations/:id/runs/:run_id", { schema: { params: runParams, response: { 200: runSchema, ...errorResponses } } }, async (req) =>
    presentRun(await conversations.run({ id: req.params.id, runId: req.params.run_id })),
  );

  r.post("/conversations/:id/runs/:run_id/cancel", { schema: { params: runParams, response: { 200: runSchema, ...errorResponses } } }, async (req) => {
    const run = await conversations.run({ id: req.params.id, runId: req.params.run_id });
    return presentRun(await cancelRun({ services, runs, run }));
  });

  r.get(
    "/conversations/:id/runs/:run_id/events",
    {
      schema: {
        params: runParams,
        querystring: eventsQuery,
        headers: z.object({ "last-event-id": z.string().optional() }),
        response: errorResponses,
      },
    },
    async (req, reply) => {
      const run = await conversations.run({ id: req.params.id, runId: req.params.run_id });
      const header = req.headers["last-event-id"];
      if (header !== undefined && !/^\d{1,9}$/.test(header.trim())) {
        throw new AppError("invalid_request", "Last-Event-ID must be an event id (a non-negative integer)", { field: "headers.last-event-id" });
      }
      const after = header !== undefined ? Number(header.trim()) : (req.query.after ?? 0);
      const release = deps.streams.take();
      return streamRunEvents(services, reply, { run, after, release, shutdown: deps.shutdown, pingMs: deps.ssePingMs });
    },
  );
}
