import type { FastifyInstance } from "fastify";
import type { ZodTypeProvider } from "fastify-type-provider-zod";
import { z } from "zod";
import { textOf } from "../../agent/messages.js";
import { presentRun } from "../../conversations/present.js";
import { sendMessage } from "../../conversations/send-message.js";
import { waitForRunEnd } from "../../runs/wait-for-run-end.js";
import { AppError } from "../../errors.js";
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
} from "../schemas.js";
import { linkedAbort } from "../../linked-abort.js";
import { serializeTrusted } from "../serialize-trusted.js";
import { streamRunEvents } from "../sse.js";

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
        headers: z.object({ "idempotency-key": z.string().min(1).max(255).regex(/^[\x21-\x7e]+$/, "must be printable ASCII").optional() }),
        response: { 200: sendMessageResponse, ...bodyErrorResponses, 409: errorSchema },
      },
    },
    async (req, reply) => {
      const { content, max_steps, tool_choice, model, stream } = req.body;
      // A stream's place is taken first: a server at its bound creates nothing.
      const release = (stream ?? (req.headers.accept ?? "").includes("text/event-stream")) ? deps.streams.take() : undefined;
      const { run, replayed } = await sendMessage({ services, runs }, {
        conversationId: req.params.id,
        content,
        maxSteps: max_steps,
        toolChoice: tool_choice,
        model,
        idempotencyKey: req.headers["idempotency-key"],
      }).catch((err: unknown) => {
        release?.();
        throw err;
      });
      reply.header("x-loopd-run-id", run.id);
      if (replayed) reply.header("idempotent-replayed", "true");
      if (release) return streamRunEvents(services, reply, { run, after: 0, shutdown: deps.shutdown, pingMs: deps.ssePingMs, release });
      const gone = new AbortController();
      reply.raw.once("close", () => gone.abort());
      // A stopping server answers with the run as it stands instead of holding
      // the shutdown until the force-exit; the next process carries the run on.
      const stop = linkedAbort(gone.signal, deps.shutdown);
      const ended = await waitForRunEnd({ services, runs, runId: run.id, signal: stop.signal }).finally(stop.dispose);
      if (!ended) throw new AppError("not_found", `run ${run.id} does not exist`);
      const messages = await conversations.messagesOfRun(ended);
      const lastAssistant = messages.filter((m) => m.role === "assistant").at(-1);
      return { run: presentRun(ended), messages, output_text: lastAssistant ? textOf(lastAssistant) : "" };
    },
  );
}
