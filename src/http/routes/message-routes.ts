import type { FastifyInstance } from "fastify";
import type { ZodTypeProvider } from "fastify-type-provider-zod";
import { z } from "zod";
import { sendMessage } from "../../conversations/send-message.js";
import type { HttpDeps } from "../http-deps.js";
import {
  bodyErrorResponses,
  conversationParams,
  errorResponses,
  errorSchema,
  messageSchema,
  messagesQuery,
  sendMessageBody,
  sendMessageResponse,
  idempotencyHeaders,
} from "../schemas.js";
import { serializeTrusted } from "../serialize-trusted.js";
import { answerWithRun, takeStreamIf } from "../answer-with-run.js";

const historyResponse = z.union([
  z.object({ data: z.array(messageSchema), next_after_seq: z.number().int().nullable() }),
  // Anthropic's has `system` beside the messages; OpenAI's has it as the first message.
  z.object({ format: z.enum(["anthropic", "openai"]), system: z.unknown().optional(), messages: z.array(z.unknown()) }),
]);

export function messageRoutes(app: FastifyInstance, deps: HttpDeps) {
  const { services, conversations, runs } = deps;
  const r = app.withTypeProvider<ZodTypeProvider>();

  r.get(
    "/conversations/:id/messages",
    {
      schema: { params: conversationParams, querystring: messagesQuery, response: { 200: historyResponse, ...errorResponses } },
      serializerCompiler: serializeTrusted,
    },
    async (req) => {
      const { id } = req.params;
      const { format, after_seq, limit } = req.query;
      return format ? conversations.history({ id, format }) : conversations.messages({ id, afterSeq: after_seq, limit });
    },
  );

  r.post(
    "/conversations/:id/messages",
    {
      schema: {
        params: conversationParams,
        body: sendMessageBody,
        headers: idempotencyHeaders,
        response: { 200: sendMessageResponse, ...bodyErrorResponses, 409: errorSchema },
      },
    },
    async (req, reply) => {
      const { content, max_steps, budget, finish, tool_choice, model, stream } = req.body;
      const release = takeStreamIf(deps, { stream, accept: req.headers.accept });
      const { run, replayed } = await sendMessage({ services, runs }, {
        conversationId: req.params.id,
        content,
        maxSteps: max_steps,
        budget,
        finish,
        toolChoice: tool_choice,
        model,
        idempotencyKey: req.headers["idempotency-key"],
      }).catch((err: unknown) => {
        release?.();
        throw err;
      });
      return answerWithRun(deps, reply, { run, replayed, afterEvent: 0, fromMessageSeq: run.firstSeq, release });
    },
  );
}
