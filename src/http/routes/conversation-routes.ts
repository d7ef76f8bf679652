import type { FastifyInstance } from "fastify";
import type { ZodTypeProvider } from "fastify-type-provider-zod";
import { z } from "zod";
import { conversationExample, forkExample } from "../schemas/examples.js";
import type { HttpDeps } from "../http-deps.js";
import { documented } from "../openapi.js";
import { contextResponse, conversationSchema } from "../schemas/conversations.js";
import { pageOf } from "../schemas/shared.js";
import {
  contextQuery,
  conversationParams,
  createConversationBody,
  forkBody,
  updateConversationBody,
} from "../schemas/conversations.js";
import { listQuery } from "../schemas/shared.js";
import { forkConversation } from "../../conversations/fork-conversation.js";
import {
  bodyErrorResponses,
  bodyLimitResponses,
  errorAnswer,
  errorResponses,
  requestErrorResponses,
  runConflict,
} from "../schemas/errors.js";

const tags = ["conversations"];
const theConversation = documented(conversationSchema, "The conversation", conversationExample);

export function conversationRoutes(app: FastifyInstance, { conversations, runs, services }: HttpDeps) {
  const r = app.withTypeProvider<ZodTypeProvider>();

  r.post(
    "/conversations",
    {
      schema: {
        summary: "Create a conversation",
        description:
          "Every field is optional; `tools` defaults to every built-in tool, `provider` to the server's default (`mock` without a model key, where it is offered: API keys off, or `MOCK_PROVIDER=true`). With `agent`, it starts from that agent's configuration (its latest version, or the one named), pinned to that version; the fields given beside it override it (`agent_overrides`).",
        operationId: "createConversation",
        tags,
        body: createConversationBody,
        response: {
          201: documented(conversationSchema, "The conversation created", conversationExample),
          ...requestErrorResponses,
          ...bodyLimitResponses,
          409: errorAnswer(
            "`agent_archived`: `agent` names an archived agent",
            "agent_archived",
            "agent support is archived: no new conversation starts from it",
            { field: "body.agent" },
          ),
        },
      },
    },
    async (req, reply) => reply.code(201).send(await conversations.create(req.tenant, req.body ?? {})),
  );

  r.post(
    "/conversations/:id/fork",
    {
      schema: {
        summary: "Fork a conversation",
        description:
          "A new conversation with this one's settings and a copy of its messages 1…`at_seq` (new ids, the same seqs), `forked_from` naming this one. `at_seq` may end after a user message, an answer that calls no tool, or the last result of a step, outside an open run; default: the end of the last finished run. Otherwise a 400 naming the nearest valid seqs (`details.nearest_valid`).",
        operationId: "forkConversation",
        tags,
        params: conversationParams,
        body: forkBody,
        response: { 201: documented(conversationSchema, "The fork", forkExample), ...bodyErrorResponses },
      },
    },
    async (req, reply) =>
      reply.code(201).send(
        await forkConversation(services, req.tenant, req.params.id, {
          atSeq: req.body?.at_seq,
          title: req.body?.title,
        }),
      ),
  );

  r.get(
    "/conversations",
    {
      schema: {
        summary: "List conversations",
        description: "Newest first; pass `next_cursor` as `cursor` for the next page.",
        operationId: "listConversations",
        tags,
        querystring: listQuery,
        response: {
          200: documented(pageOf(conversationSchema), "A page of conversations", {
            data: [conversationExample],
            next_cursor: null,
          }),
          ...requestErrorResponses,
        },
      },
    },
    (req) => conversations.list(req.tenant, req.query),
  );

  r.get(
    "/conversations/:id",
    {
      schema: {
        summary: "Get a conversation",
        operationId: "getConversation",
        tags,
        params: conversationParams,
        response: { 200: theConversation, ...errorResponses },
      },
    },
    (req) => conversations.get(req.tenant, req.params.id),
  );

  r.get(
    "/conversations/:id/context",
    {
      schema: {
        summary: "Show what the next model call is sent",
        description:
          "The request the conversation's next model call would be sent, exactly as the provider's SDK is given it: the context built from the history (refused turns left out; under `trim`, old tool results stubbed and old exchanges cut), the system prompt, the tools and the prompt-caching settings.",
        operationId: "getContext",
        tags,
        params: conversationParams,
        querystring: contextQuery,
        response: { 200: contextResponse, ...errorResponses },
      },
    },
    (req) => conversations.context({ tenant: req.tenant, id: req.params.id, format: req.query.format }),
  );

  r.patch(
    "/conversations/:id",
    {
      schema: {
        summary: "Update a conversation",
        description:
          "The same fields as on create; they apply to the runs to come. `agent_version` moves a conversation started from an agent to another of its versions (its overrides stay over it), between runs only.",
        operationId: "updateConversation",
        tags,
        params: conversationParams,
        body: updateConversationBody,
        response: {
          200: theConversation,
          ...bodyErrorResponses,
          409: runConflict("`conversation_busy`: `agent_version` while a run is open (`details.active_run_id`)"),
        },
      },
    },
    (req) => conversations.update(req.tenant, req.params.id, req.body),
  );

  r.delete(
    "/conversations/:id",
    {
      schema: {
        summary: "Delete a conversation",
        description:
          "Its messages, runs and events go with it; a run in progress is stopped. Deleting again answers 404.",
        operationId: "deleteConversation",
        tags,
        params: conversationParams,
        response: { 204: z.null().describe("Deleted"), ...errorResponses },
      },
    },
    async (req, reply) => {
      await conversations.delete(req.tenant, req.params.id, runs);
      return reply.code(204).send(null);
    },
  );
}
