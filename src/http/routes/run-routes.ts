import type { FastifyInstance } from "fastify";
import type { ZodTypeProvider } from "fastify-type-provider-zod";
import { z } from "zod";
import { cancelRun } from "../../runs/cancel-run.js";
import { presentRun } from "../../conversations/present.js";
import { AppError } from "../../errors.js";
import type { HttpDeps } from "../http-deps.js";
import { answeredExample, pausedRunExample, runExample } from "../schemas/examples.js";
import { documented, eventStream, jsonOrEventStream } from "../openapi.js";
import { pageOf } from "../schemas/shared.js";
import { runSchema } from "../schemas/runs.js";
import { sendMessageResponse } from "../schemas/messages.js";
import { answerActionsBody, eventsQuery, runParams } from "../schemas/runs.js";
import { conversationParams } from "../schemas/conversations.js";
import { idempotencyHeaders, listQuery } from "../schemas/shared.js";
import { bodyErrorResponses, errorAnswer, errorResponses } from "../schemas/errors.js";
import { answerAction } from "../../conversations/answer-action.js";
import { answerWithRun, takeStreamIf } from "../answer-with-run.js";
import { intakeHooks, taken } from "../plugins/intake-hooks.js";
import { streamRunEvents } from "../sse.js";

const tags = ["runs"];
const theRun = documented(runSchema, "The run", runExample, pausedRunExample);

export function runRoutes(app: FastifyInstance, deps: HttpDeps) {
  const { services, conversations, runs } = deps;
  const r = app.withTypeProvider<ZodTypeProvider>();

  r.get(
    "/conversations/:id/runs",
    {
      schema: {
        summary: "List a conversation's runs",
        description: "Newest first; pass `next_cursor` as `cursor` for the next page.",
        operationId: "listRuns",
        tags,
        params: conversationParams,
        querystring: listQuery,
        response: {
          200: documented(pageOf(runSchema), "A page of runs", { data: [runExample], next_cursor: null }),
          ...errorResponses,
        },
      },
    },
    (req) => conversations.runs({ tenant: req.tenant, id: req.params.id, ...req.query }),
  );

  r.get(
    "/conversations/:id/runs/:run_id",
    {
      schema: {
        summary: "Get a run",
        description: "Its status, stop reason, steps and usage; while `requires_action`, the calls it waits on.",
        operationId: "getRun",
        tags,
        params: runParams,
        response: { 200: theRun, ...errorResponses },
      },
    },
    async (req) =>
      presentRun(await conversations.run({ tenant: req.tenant, id: req.params.id, runId: req.params.run_id })),
  );

  r.get(
    "/runs/:run_id",
    {
      schema: {
        summary: "Get a run by its id alone",
        description:
          "The same run as `GET /conversations/{id}/runs/{run_id}`, for a caller that knows only the run's id (`npm run replay`): `conversation_id` says whose it is.",
        operationId: "getRunById",
        tags,
        params: runParams.pick({ run_id: true }),
        response: { 200: theRun, ...errorResponses },
      },
    },
    async (req) => presentRun(await conversations.runById(req.tenant, req.params.run_id)),
  );

  r.post(
    "/conversations/:id/runs/:run_id/cancel",
    {
      schema: {
        summary: "Cancel a run",
        description:
          "The run stops at its next safe point; a tool call left without a result gets an error result saying it was cancelled, so the history stays valid. A run that already ended is returned as it is.",
        operationId: "cancelRun",
        tags,
        params: runParams,
        response: { 200: theRun, ...errorResponses },
      },
    },
    async (req) => {
      const run = await conversations.run({ tenant: req.tenant, id: req.params.id, runId: req.params.run_id });
      return presentRun(await cancelRun({ services, runs, run }));
    },
  );

  r.post(
    "/conversations/:id/runs/:run_id/actions",
    {
      ...intakeHooks(services.intake),
      schema: {
        summary: "Answer a paused run: approvals and client tool outputs",
        description:
          "Answers every call in `run.required_action` in one request: approvals (`approve: false` with a `reason` becomes an error result the model reads) and client tools' outputs. " +
          'The run then goes on; the answer is the same as sending a message (JSON, or the events with `"stream": true`), and its event ids go on from the pause. ' +
          "A call left unanswered, an unknown id or an answer of the wrong kind is a 400 naming the ids, and changes nothing.",
        operationId: "answerRunActions",
        tags,
        params: runParams,
        body: answerActionsBody,
        headers: idempotencyHeaders,
        response: {
          200: jsonOrEventStream(
            sendMessageResponse,
            "The run, the messages this answer appended, and the last assistant text; or, streaming, the run's events after the pause",
            answeredExample,
          ),
          ...bodyErrorResponses,
          409: errorAnswer(
            "`run_not_waiting`: the run is not in `requires_action` (already answered, expired, cancelled); or `idempotency_key_reused`: the same Idempotency-Key came with another body",
            "run_not_waiting",
            "run run_123 is not waiting for an answer",
            { run_id: "run_123" },
          ),
        },
      },
    },
    async (req, reply) => {
      const { approvals, tool_outputs, actor, stream } = req.body;
      const release = takeStreamIf(deps, { stream, accept: req.headers.accept, tenant: req.tenant });
      const answered = await answerAction(
        { services, runs },
        {
          tenant: req.tenant,
          conversationId: req.params.id,
          runId: req.params.run_id,
          approvals,
          toolOutputs: tool_outputs,
          actor,
          idempotencyKey: req.headers["idempotency-key"],
        },
      )
        .catch((err: unknown) => {
          release?.();
          throw err;
        })
        .finally(() => taken(req));
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
        summary: "Follow a run's events (server-sent events)",
        description:
          "Every event after the one named by `Last-Event-ID` (or `?after=N`; neither: from the start), then the live ones; the stream ends after the run's terminal event (`run.completed`, `run.incomplete`, `run.failed`, `run.cancelled` or `run.requires_action`). " +
          "Works for finished runs, after a restart, and from any instance that shares the database.",
        operationId: "streamRunEvents",
        tags,
        params: runParams,
        querystring: eventsQuery,
        headers: z.object({
          "last-event-id": z
            .string()
            .optional()
            .describe("The id of the last event the client has; the stream starts after it (wins over `after`)"),
        }),
        response: {
          200: eventStream("The run's events after the one named, then live ones until the run ends"),
          ...errorResponses,
        },
      },
    },
    async (req, reply) => {
      const run = await conversations.run({ tenant: req.tenant, id: req.params.id, runId: req.params.run_id });
      const header = req.headers["last-event-id"];
      if (header !== undefined && !/^\d{1,9}$/.test(header.trim())) {
        throw new AppError("invalid_request", "Last-Event-ID must be an event id (a non-negative integer)", {
          field: "headers.last-event-id",
        });
      }
      const after = header !== undefined ? Number(header.trim()) : (req.query.after ?? 0);
      const release = deps.streams.take(req.tenant);
      return streamRunEvents(services, reply, { run, after, release, shutdown: deps.shutdown, pingMs: deps.ssePingMs });
    },
  );
}
