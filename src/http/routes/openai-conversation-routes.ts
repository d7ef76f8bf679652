import type { FastifyInstance } from "fastify";
import type { ZodTypeProvider } from "fastify-type-provider-zod";
import { createOpenAIConversations } from "../../openai-api/conversations/openai-conversations.js";
import type { HttpDeps } from "../http-deps.js";
import { documented } from "../openapi.js";
import {
  addItemsBody,
  conversationObjectSchema,
  conversationParams,
  createConversationBody,
  deletedConversationSchema,
  includeOf,
  includeQuery,
  itemListSchema,
  itemParams,
  itemSchema,
  listItemsQuery,
  openaiErrorSchema,
  updateConversationBody,
} from "../schemas/openai-conversations.js";

const tags = ["OpenAI-compatible API"];
const conversationExample = {
  id: "conv_0m4x2k9ab3cdefghijklmnop",
  object: "conversation" as const,
  created_at: 1_767_225_600,
  metadata: { topic: "billing" },
};
const messageExample = {
  type: "message" as const,
  id: "msg_msg_0m4x2k9ab3cdefghijklmnop",
  status: "completed" as const,
  role: "user" as const,
  content: [{ type: "input_text" as const, text: "Hello" }],
};
const listExample = {
  object: "list" as const,
  data: [messageExample],
  first_id: messageExample.id,
  last_id: messageExample.id,
  has_more: false,
};

const error = (
  description: string,
  message: string,
  code: string | null,
  param: string | null = null,
  type = "invalid_request_error",
) => documented(openaiErrorSchema, description, { error: { message, type, param, code } });
const errors = {
  400: error(
    "The request is not valid: `param` names the field",
    "items[0].call_id: no function_call call_9 waits for an output",
    null,
    "items[0].call_id",
  ),
  401: error(
    "No API key, or one unknown or revoked",
    "an API key is required: send Authorization: Bearer <key> or x-api-key: <key>",
    "unauthorized",
    null,
    "authentication_error",
  ),
  404: error(
    "No such conversation or item of the key's tenant",
    "conversation conv_0m4x2k9ab3cdefghijklmnop does not exist",
    "not_found",
  ),
  429: error(
    "Too many requests with this key (`RATE_LIMIT_PER_MIN`)",
    "more than 600 requests a minute with this API key; try again in 12 s",
    "rate_limited",
    null,
    "rate_limit_error",
  ),
  500: error(
    "A bug in loopd",
    "internal error: this is a bug in loopd, and it has been logged",
    "internal",
    null,
    "server_error",
  ),
  503: error(
    "The database is unreachable, or the process is overloaded",
    "the database is unreachable; try again shortly",
    "unavailable",
    null,
    "server_error",
  ),
};
const busy = error(
  "`conversation_busy`: the conversation has an open run; items change between runs",
  "conversation conv_0m4x2k9ab3cdefghijklmnop has an open run (run_0m4x2k9ab3cdefghijklmnop): items are added between runs",
  "conversation_busy",
);

/**
 * OpenAI's Conversations API (`/v1/conversations`) over loopd's
 * conversations: the same ids on both APIs, errors in OpenAI's shape.
 */
export function openaiConversationRoutes(app: FastifyInstance, http: HttpDeps): void {
  const v1 = createOpenAIConversations(http);
  const r = app.withTypeProvider<ZodTypeProvider>();

  r.post(
    "/v1/conversations",
    {
      schema: {
        summary: "Create a conversation (OpenAI)",
        description:
          "A loopd conversation with the server's default configuration, its `metadata` (at most 16 keys of 64 characters, values of 512), and its first `items` (at most 20) as its first messages.",
        operationId: "openaiCreateConversation",
        tags,
        body: createConversationBody,
        response: { 200: documented(conversationObjectSchema, "The conversation", conversationExample), ...errors },
      },
    },
    (req) => v1.create(req.tenant, { items: req.body?.items ?? [], metadata: req.body?.metadata ?? null }),
  );

  r.get(
    "/v1/conversations/:conversation_id",
    {
      schema: {
        summary: "Get a conversation (OpenAI)",
        operationId: "openaiGetConversation",
        tags,
        params: conversationParams,
        response: { 200: documented(conversationObjectSchema, "The conversation", conversationExample), ...errors },
      },
    },
    (req) => v1.get(req.tenant, req.params.conversation_id),
  );

  r.post(
    "/v1/conversations/:conversation_id",
    {
      schema: {
        summary: "Update a conversation's metadata (OpenAI)",
        description:
          "Replaces the metadata (null: none); loopd's other settings are changed with `PATCH /conversations/:id`.",
        operationId: "openaiUpdateConversation",
        tags,
        params: conversationParams,
        body: updateConversationBody,
        response: { 200: documented(conversationObjectSchema, "The conversation", conversationExample), ...errors },
      },
    },
    (req) => v1.update(req.tenant, req.params.conversation_id, { metadata: req.body.metadata }),
  );

  r.delete(
    "/v1/conversations/:conversation_id",
    {
      schema: {
        summary: "Delete a conversation (OpenAI)",
        description: "Deletes the loopd conversation with its messages and runs (a run still going is stopped).",
        operationId: "openaiDeleteConversation",
        tags,
        params: conversationParams,
        response: {
          200: documented(deletedConversationSchema, "Deleted", {
            id: conversationExample.id,
            object: "conversation.deleted",
            deleted: true,
          }),
          ...errors,
        },
      },
    },
    (req) => v1.delete(req.tenant, req.params.conversation_id),
  );

  r.post(
    "/v1/conversations/:conversation_id/items",
    {
      schema: {
        summary: "Add items to a conversation (OpenAI)",
        description:
          "At most 20 items, appended as loopd messages between runs: user and assistant messages, `function_call` and `function_call_output`. An output answers a call still waiting for one, before any other message; a call's `call_id` is new to the conversation. 409 while a run is open.",
        operationId: "openaiAddConversationItems",
        tags,
        params: conversationParams,
        querystring: includeQuery,
        body: addItemsBody,
        response: { 200: documented(itemListSchema, "The items added", listExample), ...errors, 409: busy },
      },
    },
    (req) =>
      v1.addItems(req.tenant, req.params.conversation_id, {
        items: req.body.items,
        include: includeOf(req.query),
      }),
  );

  r.get(
    "/v1/conversations/:conversation_id/items",
    {
      schema: {
        summary: "List a conversation's items (OpenAI)",
        description:
          "The history as items, newest first by default (`order`); `limit` 1–100 (default 20); `after`: the last item's id of the page before.",
        operationId: "openaiListConversationItems",
        tags,
        params: conversationParams,
        querystring: listItemsQuery,
        response: { 200: documented(itemListSchema, "A page of items", listExample), ...errors },
      },
    },
    (req) => {
      const { after, limit, order } = req.query;
      return v1.listItems(req.tenant, req.params.conversation_id, {
        after,
        limit,
        order,
        include: includeOf(req.query),
      });
    },
  );

  r.get(
    "/v1/conversations/:conversation_id/items/:item_id",
    {
      schema: {
        summary: "Get an item of a conversation (OpenAI)",
        operationId: "openaiGetConversationItem",
        tags,
        params: itemParams,
        querystring: includeQuery,
        response: { 200: documented(itemSchema, "The item", messageExample), ...errors },
      },
    },
    (req) => v1.getItem(req.tenant, req.params.conversation_id, req.params.item_id, includeOf(req.query)),
  );

  r.delete(
    "/v1/conversations/:conversation_id/items/:item_id",
    {
      schema: {
        summary: "Delete an item of a conversation (OpenAI)",
        description:
          'Between runs (409 while one is open). An `mcp_call` goes with its result; a `function_call` only while it has no output; a `function_call_output` (or a call with its output) is a 400, as it would leave a call without its result or a result without its call. The message is kept in loopd\'s history as `excluded: "deleted"`, its content emptied, and never sent to a model again. Answers the conversation.',
        operationId: "openaiDeleteConversationItem",
        tags,
        params: itemParams,
        response: {
          200: documented(conversationObjectSchema, "The conversation", conversationExample),
          ...errors,
          409: busy,
        },
      },
    },
    (req) => v1.deleteItem(req.tenant, req.params.conversation_id, req.params.item_id),
  );
}
