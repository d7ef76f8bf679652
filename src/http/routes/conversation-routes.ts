import type { FastifyInstance } from "fastify";
import type { ZodTypeProvider } from "fastify-type-provider-zod";
import { z } from "zod";
import type { HttpDeps } from "../http-deps.js";
import {
  bodyErrorResponses,
  contextQuery,
  contextResponse,
  conversationParams,
  conversationSchema,
  createConversationBody,
  errorResponses,
  listQuery,
  pageOf,
  updateConversationBody,
} from "../schemas.js";

export function conversationRoutes(app: FastifyInstance, { conversations, runs }: HttpDeps) {
  const r = app.withTypeProvider<ZodTypeProvider>();

  r.post(
    "/conversations",
    { schema: { body: createConversationBody, response: { 201: conversationSchema, ...bodyErrorResponses } } },
    async (req, reply) => reply.code(201).send(await conversations.create(req.body ?? {})),
  );

  r.get("/conversations", { schema: { querystring: listQuery, response: { 200: pageOf(conversationSchema), ...errorResponses } } }, (req) =>
    conversations.list(req.query),
  );

  r.get("/conversations/:id", { schema: { params: conversationParams, response: { 200: conversationSchema, ...errorResponses } } }, (req) =>
    conversations.get(req.params.id),
  );

  r.get(
    "/conversations/:id/context",
    { schema: { params: conversationParams, querystring: contextQuery, response: { 200: contextResponse, ...errorResponses } } },
    (req) => conversations.context({ id: req.params.id, format: req.query.format }),
  );

  r.patch(
    "/conversations/:id",
    { schema: { params: conversationParams, body: updateConversationBody, response: { 200: conversationSchema, ...bodyErrorResponses } } },
    (req) => conversations.update(req.params.id, req.body),
  );

  r.delete("/conversations/:id", { schema: { params: conversationParams, response: { 204: z.null(), ...errorResponses } } }, async (req, reply) => {
    await conversations.delete(req.params.id, runs);
    return reply.code(204).send(null);
  });
}
