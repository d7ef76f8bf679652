import type { FastifyInstance, FastifyReply } from "fastify";
import type { ZodTypeProvider } from "fastify-type-provider-zod";
import { z } from "zod";
import { cancelRun } from "../../runs/cancel-run.js";
import { waitForRunEnd } from "../../runs/wait-for-run-end.js";
import { linkedAbort } from "../../util/linked-abort.js";
import { createResponseBody } from "../../openai-api/responses/create-response-body.js";
import { createResponse, type CreatedResponse } from "../../openai-api/responses/create-response.js";
import { inputItemsOf, readResponse, recordOf, type ResponseRecord } from "../../openai-api/responses/read-response.js";
import { responseEncoderOf, type ConversationTools } from "../../openai-api/responses/response-stream.js";
import { openAiError, openAiErrorOf } from "../../openai-api/openai-errors.js";
import type { RunRow } from "../../store/schema.js";
import type { ErrorCode } from "../../errors.js";
import type { HttpDeps } from "../http-deps.js";
import { documented, jsonOrEventStream } from "../openapi.js";
import { id } from "../schemas/shared.js";
import { streamRunEvents } from "../sse.js";
import { intakeHooks, taken } from "../plugins/intake-hooks.js";
import { messageBodyLimit } from "../plugins/message-body-limit.js";

const tags = ["OpenAI-compatible API"];
const openAiErrorSchema = z.object({
  error: z.object({ message: z.string(), type: z.string(), param: z.string().nullable(), code: z.string().nullable() }),
});
/** Examples without nulls (the generator drops an example holding one): a param and a code each. */
const ERROR_EXAMPLES: Record<number, [ErrorCode, string, Record<string, unknown>]> = {
  400: [
    "invalid_request",
    "Previous response with id 'resp_123' not found.",
    { field: "body.previous_response_id", openai_code: "previous_response_not_found" },
  ],
  401: ["unauthorized", "an API key is required: send Authorization: Bearer <key>", { field: "headers.authorization" }],
  404: [
    "not_found",
    "The model 'agent:nobody' does not exist or you do not have access to it (no agent nobody).",
    { field: "body.model", openai_code: "model_not_found" },
  ],
  409: ["conversation_busy", "conversation conv_123 already has an active run", { field: "body.conversation" }],
  413: ["payload_too_large", "the request body is larger than the server accepts", { field: "body" }],
  429: [
    "rate_limited",
    "more than 600 requests a minute with this API key; try again in 12 s",
    { field: "headers.authorization" },
  ],
  500: ["internal", "internal error: this is a bug in loopd, and it has been logged", { field: "body" }],
  503: ["unavailable", "the database is unreachable; try again shortly", { field: "body" }],
};
const errors = Object.fromEntries(
  Object.entries(ERROR_EXAMPLES).map(([status, [code, message, details]]) => [
    status,
    documented(
      openAiErrorSchema,
      "An error in OpenAI's shape (`type`, `param`, `code`), with the same status loopd gives it",
      openAiErrorOf(code, message, details),
    ),
  ]),
);
const responseSchema = z
  .record(z.string(), z.unknown())
  .describe("The Open Responses specification's `ResponseResource`");
const params = z.object({ id: id() });
const notFound = (id: string) =>
  openAiError("not_found", `Response with id '${id}' not found.`, { param: null, openaiCode: null });

/**
 * OpenAI's Responses API over loopd's runs (`src/openai-api/responses/`):
 * create (a JSON answer once the run ends or pauses, a stream of the spec's
 * events, or at once in the background), read back and resume, cancel, and
 * the items a response was given.
 */
export function openAiResponseRoutes(app: FastifyInstance, deps: HttpDeps) {
  const { services, runs } = deps;
  const r = app.withTypeProvider<ZodTypeProvider>();

  const stream = async (
    reply: FastifyReply,
    {
      record,
      run,
      startingAfter,
      release,
      tools,
    }: {
      record: ResponseRecord;
      run: RunRow;
      startingAfter?: number | undefined;
      release: () => void;
      tools?: ConversationTools;
    },
  ) =>
    streamRunEvents(services, reply.header("x-loopd-run-id", run.id), {
      run,
      after: record.afterEvent,
      release,
      shutdown: deps.shutdown,
      pingMs: deps.ssePingMs,
      encoder: await responseEncoderOf(services, { record, run, startingAfter, tools }),
    });

  const load = async (tenant: string, id: string) => {
    const row = await services.store.openaiResponses.get(tenant, id);
    if (!row) throw notFound(id);
    return recordOf(row);
  };

  r.post(
    "/v1/responses",
    {
      ...intakeHooks(services.intake),
      bodyLimit: messageBodyLimit(services.config),
      schema: {
        summary: "Create a response (OpenAI's Responses API)",
        description:
          "The open Open Responses specification's `POST /responses` over a loopd run: `model` is `agent:<name>[@<version>]`, `<provider>/<model>` or a model of the default provider. Function tools are the client's; the agent's tools appear as `mcp_call` items. `stream: true` sends the spec's events; `background: true` answers at once.",
        operationId: "createOpenAiResponse",
        tags,
        body: createResponseBody,
        response: { 200: jsonOrEventStream(responseSchema, "The response, or its events", {}), ...errors },
      },
    },
    async (req, reply) => {
      const release = req.body.stream ? deps.streams.take(req.tenant) : undefined;
      let created: CreatedResponse;
      try {
        created = await createResponse(deps, { tenant: req.tenant, body: req.body });
      } catch (err) {
        release?.();
        throw err;
      }
      taken(req);
      const forget = async () => {
        // store: false: nothing of it is kept once it is answered.
        if (!created.throwaway) return;
        await deps.conversations.delete(req.tenant, created.conversationId, runs).catch(() => {});
        services.throwaways?.release(created.conversationId);
      };
      reply.header("x-loopd-run-id", created.run.id);
      if (release)
        return stream(reply, {
          record: created,
          run: created.run,
          tools: created.tools,
          release: () => {
            release();
            void forget();
          },
        });
      try {
        if (!created.background) {
          const gone = new AbortController();
          reply.raw.once("close", () => gone.abort());
          const stop = linkedAbort(gone.signal, deps.shutdown);
          await waitForRunEnd({ services, runs, runId: created.run.id, signal: stop.signal }).finally(stop.dispose);
        }
        const response = await readResponse(services, created);
        if (!response) throw notFound(created.id);
        return response;
      } finally {
        await forget();
      }
    },
  );

  r.get(
    "/v1/responses/:id",
    {
      schema: {
        summary: "Retrieve a response, or resume its events",
        description:
          "The response as it stands; with `stream=true`, its events from the start, or after `starting_after` (a `sequence_number`), to its end.",
        operationId: "getOpenAiResponse",
        tags,
        params,
        querystring: z.object({
          stream: z.enum(["true", "false"]).optional(),
          starting_after: z.coerce.number().int().min(-1).optional(),
          include: z.union([z.string(), z.array(z.string())]).optional(),
        }),
        response: { 200: jsonOrEventStream(responseSchema, "The response, or its events", {}), ...errors },
      },
    },
    async (req, reply) => {
      const record = await load(req.tenant, req.params.id);
      if (req.query.stream === "true") {
        const run = await services.store.runs.getOfTenant(req.tenant, record.runId);
        if (!run) throw notFound(record.id);
        return stream(reply, {
          record,
          run,
          startingAfter: req.query.starting_after,
          release: deps.streams.take(req.tenant),
        });
      }
      const response = await readResponse(services, record);
      if (!response) throw notFound(record.id);
      return response;
    },
  );

  r.post(
    "/v1/responses/:id/cancel",
    {
      schema: {
        summary: "Cancel a background response",
        description:
          "Stops a background response's run; one that has ended is answered as it is. A response that is not a background one: `400`.",
        operationId: "cancelOpenAiResponse",
        tags,
        params,
        response: { 200: responseSchema, ...errors },
      },
    },
    async (req) => {
      const record = await load(req.tenant, req.params.id);
      if (!record.background)
        throw openAiError("invalid_request", "Only responses created with background: true can be cancelled.", {
          param: null,
          openaiCode: null,
        });
      const before = await readResponse(services, record);
      if (!before) throw notFound(record.id);
      if (before.status !== "queued" && before.status !== "in_progress") return before;
      const run = await services.store.runs.getOfTenant(req.tenant, record.runId);
      if (run) await cancelRun({ services, runs, run });
      return (await readResponse(services, record)) ?? before;
    },
  );

  r.get(
    "/v1/responses/:id/input_items",
    {
      schema: {
        summary: "The items a response was given",
        description:
          "The user's message, the function outputs and denials it answered with; newest first unless `order=asc`.",
        operationId: "listOpenAiResponseInputItems",
        tags,
        params,
        querystring: z.object({
          order: z.enum(["asc", "desc"]).default("desc"),
          after: z.string().optional(),
          limit: z.coerce.number().int().min(1).max(100).default(20),
          include: z.union([z.string(), z.array(z.string())]).optional(),
        }),
        response: { 200: documented(z.record(z.string(), z.unknown()), "A list of items"), ...errors },
      },
    },
    async (req) => {
      const record = await load(req.tenant, req.params.id);
      const items = await inputItemsOf(services, record);
      const ordered = req.query.order === "asc" ? items : items.reverse();
      const start = req.query.after ? ordered.findIndex((i) => i.id === req.query.after) + 1 : 0;
      const data = ordered.slice(start, start + req.query.limit);
      return {
        object: "list",
        data,
        first_id: data[0]?.id ?? null,
        last_id: data.at(-1)?.id ?? null,
        has_more: start + data.length < ordered.length,
      };
    },
  );
}

/** The OpenAI-shaped error answers of `/v1/responses`, for the routes beside it. */
export { errors as openAiErrorResponses };
