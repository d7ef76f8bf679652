import type { FastifyInstance } from "fastify";
import type { ZodTypeProvider } from "fastify-type-provider-zod";
import { z } from "zod";
import { cancelRun } from "../../runs/cancel-run.js";
import { presentRun } from "../../conversations/present.js";
import { AppError } from "../../errors.js";
import type { HttpDeps } from "../http-deps.js";
import {
  answerActionsBody,
  bodyErrorResponses,
  conversationParams,
  errorResponses,
  errorSchema,
  eventsQuery,
  idempotencyHeaders,
  listQuery,
  pageOf,
  runParams,
  runSchema,
  sendMessageResponse,
} from "../schemas.js";
import { answerAction } from "../../conversations/answer-action.js";
import { answerWithRun, takeStreamIf } from "../answer-with-run.js";
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

  r.post(
    "/conversations/:id/runs/:run_id/actions",
    {
      schema: {
        params: runParams,
        body: answerActionsBody,
        headers: idempotencyHeaders,
        response: { 200: sendMessageResponse, ...bodyErrorResponses, 409: errorSchema },
      },
    },
    async (req, reply) => {
      const { approvals, tool_outputs, actor, stream } = req.body;
      const release = takeStreamIf(deps, { stream, accept: req.headers.accept });
      const answered = await answerAction({ services, runs }, {
        conversationId: req.params.id,
        runId: req.params.run_id,
        approvals,
        toolOutputs: tool_outputs,
        actor,
        idempotencyKey: req.headers["idempotency-key"],
      }).catch((err: unknown) => {
        release?.();
        throw err;
      });
      return answerWithRun(deps, reply, {
        run: answered.run,
        replayed: answered.replayed,
        afterEvent: answered.afterEventSeq,
        fromMessageSeq: answered.firstMessageSeq,
        release,
      });
    },
  );

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
