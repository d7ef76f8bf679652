import type { FastifyInstance, FastifyReply } from "fastify";
import type { ZodTypeProvider } from "fastify-type-provider-zod";
import { z } from "zod";
import { answerAction } from "../../conversations/answer-action.js";
import { isConversationId, openChat } from "../../conversations/open-chat.js";
import { sendMessage } from "../../conversations/send-message.js";
import { checkUserContent } from "../../attachments/check-user-content.js";
import { checkMessageText } from "../../conversations/check-message-text.js";
import { AppError } from "../../errors.js";
import type { RunRow } from "../../store/schema.js";
import type { Message } from "../../core/messages.js";
import type { HttpDeps } from "../http-deps.js";
import { bodyErrorResponses, errorResponses, runConflict } from "../schemas/errors.js";
import { documented, uiMessageStream } from "../openapi.js";
import { idempotencyHeaders } from "../schemas/shared.js";
import { streamRunEvents } from "../sse.js";
import { intakeHooks, taken } from "../plugins/intake-hooks.js";
import { createUiChunkEncoder, UI_DONE, uiFrame } from "../ui-chat/ui-chunk-encoder.js";
import { uiMessagesOf } from "../ui-chat/ui-messages-of.js";
import { answersFor, readUiRequest } from "../ui-chat/read-ui-message.js";
import { uiChatBody, uiChatParams } from "../ui-chat/ui-chat-schemas.js";
import { messageBodyLimit } from "../plugins/message-body-limit.js";
import { presentMessage } from "../../conversations/present.js";

const tags = ["chat UIs (AI SDK)"];
const HISTORY_PAGE = 1_000;
const UI_HEADERS = { "x-vercel-ai-ui-message-stream": "v1" };

const notWaiting = runConflict(
  "`conversation_busy`: a user message came while a run is going; `run_not_waiting`: tool answers came and no run waits for them; `idempotency_key_reused`: the same Idempotency-Key came with another body",
);

/**
 * The AI SDK's chat protocol over loopd's own runs: a UI message starts a
 * run or answers a paused one, and the run's events go out as UI message
 * chunks (one encoder, `ui-chat/ui-chunk-encoder.ts`); the stream is the
 * same one `…/runs/:id/events` follows, so it resumes from the run's start.
 */
export function uiChatRoutes(app: FastifyInstance, deps: HttpDeps) {
  const { services, conversations, runs } = deps;
  const r = app.withTypeProvider<ZodTypeProvider>();

  const streamUi = (reply: FastifyReply, run: RunRow, after: number, release: () => void) =>
    streamRunEvents(services, reply.header("x-loopd-run-id", run.id), {
      run,
      after,
      release,
      shutdown: deps.shutdown,
      pingMs: deps.ssePingMs,
      encoder: { headers: UI_HEADERS, ...createUiChunkEncoder(run.id) },
    });

  r.post(
    "/ui/chat",
    {
      ...intakeHooks(services.intake),
      // A user message may carry files (data: URLs), as `POST …/messages` may. (The AI SDK sends the whole chat each time:
      // an app whose chat holds many files sends only the last message, with the transport's `prepareSendMessagesRequest`.)
      bodyLimit: messageBodyLimit(services.config),
      schema: {
        summary: "Chat with the AI SDK's protocol (useChat, DefaultChatTransport)",
        description:
          "What `DefaultChatTransport` sends: the last message is read (loopd keeps the history). A user message starts a run (its text parts, and its file parts as images and documents: `data:` URLs of PNG, JPEG, GIF, WebP, PDF or plain text, or an http(s) image URL); an assistant message with approval responses or client tools' outputs answers the paused run. " +
          "`id` is a conversation id, or an AI SDK chat id naming the conversation with that `chat_id` (created on its first message, with the body's `conversation` settings). " +
          "A regenerate or an edit is refused with an `error` chunk: the history is append-only.",
        operationId: "uiChat",
        tags,
        body: uiChatBody,
        headers: idempotencyHeaders,
        response: {
          200: uiMessageStream("The run's events as UI message chunks, then `[DONE]`"),
          ...bodyErrorResponses,
          409: notWaiting,
        },
      },
    },
    async (req, reply) => {
      const request = readUiRequest(req.body);
      if (request.kind === "refused") {
        return reply
          .header("content-type", "text/event-stream; charset=utf-8")
          .headers(UI_HEADERS)
          .send(uiFrame({ type: "error", errorText: request.reason }) + UI_DONE);
      }
      const { tenant } = req;
      const conversation = await openChat(
        { services, conversations },
        {
          tenant,
          chatId: req.body.id,
          settings: req.body.conversation ?? undefined,
          create: request.kind === "send",
          // A new chat's first message with a bad file makes no conversation (its files are checked again as they are stored).
          beforeCreate:
            request.kind === "send"
              ? () => {
                  checkMessageText(request.content, {
                    maxBytes: services.config.bodies.messageTextBytes,
                    field: request.partsField,
                  });
                  return checkUserContent(request.content, {
                    ...services.config.attachments,
                    fieldOf: request.fieldOf,
                  });
                }
              : undefined,
        },
      );
      const release = deps.streams.take(req.tenant);
      try {
        if (request.kind === "send") {
          const { max_steps, budget, finish, tool_choice, model, on_busy } = req.body;
          const { run } = await sendMessage(
            { services, runs },
            {
              tenant,
              conversationId: conversation.id,
              content: request.content,
              contentField: request.fieldOf,
              textField: request.partsField,
              maxSteps: max_steps,
              budget,
              finish,
              toolChoice: tool_choice,
              model,
              idempotencyKey: req.headers["idempotency-key"],
              onBusy: on_busy,
            },
          );
          taken(req);
          return await streamUi(reply, run, 0, release);
        }
        const waiting = conversation.active_run_id
          ? await services.store.runs.getOfTenant(tenant, conversation.active_run_id)
          : undefined;
        if (waiting?.status !== "requires_action" || !waiting.requiredAction) {
          throw new AppError("run_not_waiting", `conversation ${conversation.id} has no run waiting for an answer`, {
            run_id: conversation.active_run_id,
          });
        }
        const answered = await answerAction(
          { services, runs },
          {
            tenant,
            conversationId: conversation.id,
            runId: waiting.id,
            ...answersFor(waiting.requiredAction.tool_calls, request),
            idempotencyKey: req.headers["idempotency-key"],
          },
        );
        taken(req);
        return await streamUi(reply, answered.run, answered.afterEventSeq, release);
      } catch (err) {
        release();
        throw err;
      }
    },
  );

  r.get(
    "/ui/chat/:id/stream",
    {
      schema: {
        summary: "Resume a chat's stream (useChat({ resume: true }))",
        description:
          "The conversation's open run (running or paused) as UI message chunks from its start; `204` when it has none (or the chat id names no conversation yet).",
        operationId: "uiChatStream",
        tags,
        params: uiChatParams,
        response: {
          200: uiMessageStream("The open run's UI message stream from its start"),
          204: documented(z.null(), "No run is open"),
          ...errorResponses,
        },
      },
    },
    async (req, reply) => {
      const conversation = await openKnown(req.tenant, req.params.id);
      const runId = conversation?.active_run_id;
      const run = runId ? await services.store.runs.getOfTenant(req.tenant, runId) : undefined;
      if (!run) return reply.code(204).send(null);
      return streamUi(reply, run, 0, deps.streams.take(req.tenant));
    },
  );

  r.get(
    "/ui/chat/:id/messages",
    {
      schema: {
        summary: "A chat's history as UI messages (useChat({ messages }))",
        description:
          "Each user message, and each run's answer as one assistant message whose id is the run's. The open run's answer is left out: `GET …/stream` brings it. An AI SDK chat id with no conversation yet: `[]`.",
        operationId: "uiChatMessages",
        tags,
        params: uiChatParams,
        response: {
          200: documented(z.array(z.record(z.string(), z.unknown())), "The history as UI messages"),
          ...errorResponses,
        },
      },
    },
    async (req) => {
      const conversation = await openKnown(req.tenant, req.params.id);
      if (!conversation) return [];
      const history: Message[] = [];
      for (let afterSeq = 0; ;) {
        const page = await services.store.messages.page({
          conversationId: conversation.id,
          afterSeq,
          limit: HISTORY_PAGE,
        });
        history.push(...page.map(presentMessage));
        if (page.length < HISTORY_PAGE) break;
        afterSeq = page.at(-1)!.seq;
      }
      return uiMessagesOf(history, {
        conversationId: conversation.id,
        openRunId: conversation.active_run_id,
      }) as unknown as Record<string, unknown>[];
    },
  );

  /** The conversation a chat id names; an AI SDK chat id with none yet: undefined (a conversation id must exist). */
  async function openKnown(tenant: string, chatId: string) {
    return openChat({ services, conversations }, { tenant, chatId, create: false }).catch((err: unknown) => {
      if (!isConversationId(chatId) && err instanceof AppError && err.code === "not_found") return undefined;
      throw err;
    });
  }
}
