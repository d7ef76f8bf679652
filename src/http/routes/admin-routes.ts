import type { FastifyInstance } from "fastify";
import type { ZodTypeProvider } from "fastify-type-provider-zod";
import { z } from "zod";
import { notFound } from "../../errors.js";
import { TENANT_NAME, type ApiKeyInfo } from "../../store/key-repository.js";
import { presentsToken } from "../plugins/api-keys.js";
import { replyError } from "../plugins/error-handler.js";
import type { HttpDeps } from "../http-deps.js";
import { documented } from "../openapi.js";
import { serverSchema } from "./tool-routes.js";
import { bodyErrorResponses, errorAnswer, errorResponses, requestErrorResponses } from "../schemas/errors.js";

const keySchema = z.object({
  id: z.string(),
  tenant: z.string(),
  name: z.string().nullable(),
  created_at: z.string(),
  last_used_at: z.string().nullable(),
  revoked_at: z.string().nullable(),
});
const createdKeySchema = z.object({
  id: z.string(),
  key: z.string(),
  tenant: z.string(),
  name: z.string().nullable(),
  created_at: z.string(),
});
const unauthorized = {
  401: errorAnswer(
    "`unauthorized`: the request does not carry `Authorization: Bearer <ADMIN_TOKEN>`",
    "unauthorized",
    "the admin routes need Authorization: Bearer <ADMIN_TOKEN>",
  ),
};

export const presentKey = (k: ApiKeyInfo) => ({
  id: k.id,
  tenant: k.tenantId,
  name: k.name,
  created_at: k.createdAt.toISOString(),
  last_used_at: k.lastUsedAt?.toISOString() ?? null,
  revoked_at: k.revokedAt?.toISOString() ?? null,
});

/** The admin routes, for `ADMIN_TOKEN` only (a tenant's key is refused): API keys made, listed and revoked over HTTP. */
export function adminRoutes(
  app: FastifyInstance,
  { services: { store, toolSets } }: HttpDeps,
  {
    adminToken,
    onRevoked,
  }: { adminToken: string; /** A key was revoked: this instance refuses it from now on. */ onRevoked: () => void },
) {
  const r = app.withTypeProvider<ZodTypeProvider>();
  const tags = ["admin"];
  const onlyAdmin = async (req: Parameters<typeof presentsToken>[0], reply: Parameters<typeof replyError>[0]) => {
    if (!presentsToken(req, adminToken))
      return replyError(reply, "unauthorized", "the admin routes need Authorization: Bearer <ADMIN_TOKEN>");
  };
  r.post(
    "/admin/keys",
    {
      // Before the body is read or checked: without the token, nothing else is looked at.
      onRequest: onlyAdmin,
      schema: {
        summary: "Make an API key",
        description: "A new key for a tenant, shown once in this answer (only its SHA-256 is kept).",
        operationId: "createApiKey",
        tags,
        body: z.strictObject({
          tenant: z
            .string()
            .regex(TENANT_NAME, "must be 1–64 of A-Z, a-z, 0-9, _, . and -, starting with a letter or digit"),
          name: z.string().trim().min(1).max(200).optional(),
        }),
        response: {
          201: documented(createdKeySchema, "The key, shown this once", {
            id: "key_0mx5",
            key: "lpd_3q…",
            tenant: "acme",
            name: "backend",
            created_at: "2026-12-02T10:00:00.000Z",
          }),
          ...bodyErrorResponses,
          ...unauthorized,
        },
      },
    },
    async (req, reply) => {
      const { key, row } = await store.keys.create({ tenant: req.body.tenant, name: req.body.name ?? null });
      return reply
        .code(201)
        .send({ id: row.id, key, tenant: row.tenantId, name: row.name, created_at: row.createdAt.toISOString() });
    },
  );
  r.get(
    "/admin/keys",
    {
      // Before the body is read or checked: without the token, nothing else is looked at.
      onRequest: onlyAdmin,
      schema: {
        summary: "List API keys",
        description: "Every key (never the key itself), newest first; `tenant` keeps one tenant's.",
        operationId: "listApiKeys",
        tags,
        querystring: z.strictObject({ tenant: z.string().regex(TENANT_NAME).optional() }),
        response: {
          200: documented(z.object({ data: z.array(keySchema) }), "The keys", { data: [] }),
          ...requestErrorResponses,
          ...unauthorized,
        },
      },
    },
    async (req) => ({ data: (await store.keys.list({ tenant: req.query.tenant })).map(presentKey) }),
  );
  r.delete(
    "/admin/keys/:key_id",
    {
      // Before the body is read or checked: without the token, nothing else is looked at.
      onRequest: onlyAdmin,
      schema: {
        summary: "Revoke an API key",
        description:
          "From now on the key is refused with 401: at once on this instance, within a second on every other.",
        operationId: "revokeApiKey",
        tags,
        params: z.object({ key_id: z.string().min(1).max(100) }),
        response: { 204: z.null().describe("Revoked"), ...errorResponses, ...unauthorized },
      },
    },
    async (req, reply) => {
      if (!(await store.keys.revoke(req.params.key_id))) throw notFound("key", req.params.key_id);
      onRevoked();
      return reply.code(204).send(null);
    },
  );
  r.get(
    "/admin/tools/servers",
    {
      onRequest: onlyAdmin,
      schema: {
        summary: "List MCP servers, with their stderr",
        description:
          "`GET /tools/servers` with, for each server, the last line it wrote to stderr before it went (secrets redacted). " +
          "Only for `ADMIN_TOKEN`: what a server writes may hold any tenant's tool arguments, so tenants see its status and exit code only. " +
          "A route of its own rather than the admin token on `/tools/servers`: that route answers for a tenant's key, and one route answering two kinds of credential could be asked with the wrong one.",
        operationId: "listToolServersForAdmin",
        tags,
        response: {
          200: documented(
            z.object({
              data: z.array(
                serverSchema.extend({
                  stderr: z
                    .string()
                    .nullable()
                    .describe("The last line it wrote to stderr before it went; null when it is up or wrote nothing"),
                }),
              ),
            }),
            "The servers",
            {
              data: [
                {
                  name: "fs",
                  transport: "stdio",
                  status: "restarting",
                  tools: 14,
                  restarts: 1,
                  exit_code: 1,
                  last_error: "exited with code 1",
                  stderr: "Error: ENOENT: no such file or directory, open '/srv/docs/x'",
                },
              ],
            },
          ),
          ...requestErrorResponses,
          ...unauthorized,
        },
      },
    },
    async () => ({ data: toolSets.flatMap((set) => set.statuses()) }),
  );
}
