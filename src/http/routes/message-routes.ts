import type { FastifyInstance } from "fastify";
import type { ZodTypeProvider } from "fastify-type-provider-zod";
import { z } from "zod";
import { sendMessage } from "../../conversations/send-message.js";
import { HISTORY_FORMATS } from "../../providers/registry.js";
import type { HttpDeps } from "../http-deps.js";
import { messagesExample, sendMessageExample } from "../schemas/examples.js";
import { documented, jsonOrEventStream } from "../openapi.js";
import { messageSchema, sendMessageResponse } from "../schemas/messages.js";
import { runSchema } from "../schemas/runs.js";
import { presentRun } from "../../conversations/present.js";
import { conversationParams } from "../schemas/conversations.js";
import { messagesQuery, sendMessageBody } from "../schemas/messages.js";
import { idempotencyHeaders } from "../schemas/shared.js";
import { bodyErrorResponses, errorAnswer, errorResponses, runConflict } from "../schemas/errors.js";
import { serializeTrusted } from "../plugins/serialize-trusted.js";
import { answerWithRun, takeStreamIf } from "../answer-with-run.js";
import { intakeHooks, taken } from "../plugins/intake-hooks.js";
import { messageBodyLimit } from "../plugins/message-body-limit.js";

const historyResponse = documented(
  z.union([
    z.object({ data: z.array(messageSchema), next_after_seq: z.number().int().nullable() }),
    // Anthropic's has `system` beside the messages; OpenAI's has it as the first message.
    z.object({
      format: z.enum(HISTORY_FORMATS),
      system: z.unknown().optional(),
      messages: z.array(z.unknown()),
    }),
  ]),
  "Without `format`: a page of the canonical history (`next_after_seq` is the next `after_seq`, null at the end). With `format`: the whole history as that provider's SDK takes it.",
  { data: messagesExample, next_after_seq: null },
  {
    format: "anthropic",
    system: "You are a helpful assistant.",
    messages: [
      { role: "user", content: [{ type: "text", text: "What is 12*7?" }] },
      {
        role: "assistant",
        content: [{ type: "tool_use", id: "mock_call_1", name: "calculate", input: { expression: "12*7" } }],
      },
      {
        role: "user",
        content: [
          {
            type: "tool_result",
            tool_use_id: "mock_call_1",
            content: '{"expression":"12*7","result":84}',
            is_error: false,
          },
        ],
      },
      { role: "assistant", content: [{ type: "text", text: "12*7 = 84" }] },
    ],
  },
);

const queueFull = errorAnswer(
  '`queue_full`: `on_busy: "enqueue"` (or `"interrupt"`) with the conversation\'s queue at `MAX_QUEUED_RUNS`; `too_many_runs`: the tenant\'s open runs at `MAX_ACTIVE_RUNS_PER_TENANT`; `rate_limited`',
  "queue_full",
  "conversation conv_123 has 10 queued runs, the most MAX_QUEUED_RUNS allows; wait for one to start, or cancel one",
  { queued_runs: 10 },
);

/** 409s of a request that starts a run. */
const sendConflict = runConflict(
  "`conversation_busy`: a run is already active on the conversation (`details.active_run_id`); or `idempotency_key_reused`: the same Idempotency-Key came with another body",
);

export function messageRoutes(app: FastifyInstance, deps: HttpDeps) {
  const { services, conversations, runs } = deps;
  const r = app.withTypeProvider<ZodTypeProvider>();

  r.get(
    "/conversations/:id/messages",
    {
      schema: {
        summary: "Read the history",
        description:
          "The conversation's messages in order (`seq` 1, 2, 3, …), paged by `after_seq`; or, with `format=anthropic|openai`, the whole history in that provider's own format, ready to pass to its SDK.",
        operationId: "listMessages",
        tags: ["messages"],
        params: conversationParams,
        querystring: messagesQuery,
        response: { 200: historyResponse, ...errorResponses },
      },
      serializerCompiler: serializeTrusted,
    },
    async (req) => {
      const { id } = req.params;
      const { format, after_seq, limit } = req.query;
      return format
        ? conversations.history({ tenant: req.tenant, id, format })
        : conversations.messages({ tenant: req.tenant, id, afterSeq: after_seq, limit });
    },
  );

  r.post(
    "/conversations/:id/messages",
    {
      ...intakeHooks(services.intake),
      bodyLimit: messageBodyLimit(services.config),
      // Only images and documents use the larger allowance: the rest is held to the general limit, before it is parsed.
      config: { textBodyLimit: services.config.server.bodyLimitBytes },
      schema: {
        summary: "Send a message: start a run",
        description:
          "Saves the user message and runs the agent: model calls and tool calls until the model answers, a budget ends the run, or a call needs an approval or a client's output (`requires_action`). " +
          'Answers 200 whenever a run was created; `run.status` and `run.error` tell the outcome. With `"stream": true` or `Accept: text/event-stream` the answer is the run\'s events as they happen, ending with the run.',
        operationId: "sendMessage",
        tags: ["messages"],
        params: conversationParams,
        body: sendMessageBody,
        headers: idempotencyHeaders,
        response: {
          200: jsonOrEventStream(
            sendMessageResponse,
            "The run, every message this request appended (starting with the user message), and the last assistant text; or, streaming, the run's events",
            sendMessageExample,
          ),
          202: documented(
            z.object({ run: runSchema }),
            '`"wait": false`: the run as it stands; it goes on (follow it with `GET …/events`, poll it, or get a webhook)',
            { run: { ...sendMessageExample.run, status: "running", stop_reason: null, completed_at: null } },
          ),
          ...bodyErrorResponses,
          409: sendConflict,
          429: queueFull,
        },
      },
    },
    async (req, reply) => {
      const {
        content,
        max_steps,
        budget,
        finish,
        tool_choice,
        model,
        stream,
        on_busy,
        wait,
        webhook,
        on_provider_outage,
        fallbacks,
      } = req.body;
      const release = takeStreamIf(deps, { stream, accept: req.headers.accept, tenant: req.tenant });
      const { run, replayed } = await sendMessage(
        { services, runs },
        {
          tenant: req.tenant,
          conversationId: req.params.id,
          content,
          maxSteps: max_steps,
          budget,
          finish,
          toolChoice: tool_choice,
          model,
          idempotencyKey: req.headers["idempotency-key"],
          onBusy: on_busy,
          onProviderOutage: on_provider_outage,
          webhook,
          fallbacks,
        },
      )
        .catch((err: unknown) => {
          release?.();
          throw err;
        })
        .finally(() => taken(req));
      // A background run: the run as it stands, at once; it goes on.
      if (!release && wait === false) {
        reply.header("x-loopd-run-id", run.id);
        if (replayed) reply.header("idempotent-replayed", "true");
        return reply.code(202).send({ run: presentRun(run) });
      }
      return answerWithRun(deps, reply, { run, replayed, afterEvent: 0, fromMessageSeq: run.firstSeq, release });
    },
  );
}
