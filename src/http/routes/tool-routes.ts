import type { FastifyInstance } from "fastify";
import type { ZodTypeProvider } from "fastify-type-provider-zod";
import { z } from "zod";
import { sourceOf } from "../../tools/define-tool.js";
import { TOOL_ORIGINS } from "../../tools/sources.js";
import { SERVER_STATES, SERVER_TRANSPORTS } from "../../tools/tool-server-status.js";
import type { HttpDeps } from "../http-deps.js";
import { documented } from "../openapi.js";
import { requestErrorResponses } from "../schemas/errors.js";
import { toolsOfTenant } from "../../tools/tools-of-tenant.js";

const toolSchema = z.object({
  name: z.string(),
  description: z.string(),
  input_schema: z.record(z.string(), z.unknown()),
  source: z.enum(TOOL_ORIGINS),
  server: z.string().nullable(),
  read_only: z.boolean(),
  approval: z.enum(["never", "always", "conditional"]),
  status: z.enum(["ready", "unavailable"]),
});

export const serverSchema = z.object({
  name: z.string(),
  transport: z.enum(SERVER_TRANSPORTS),
  status: z.enum(SERVER_STATES),
  tools: z.number().int(),
  restarts: z.number().int(),
  exit_code: z
    .number()
    .int()
    .nullable()
    .describe("The code it last exited with, while it is down; null when it is up, did not exit, or a signal ended it"),
  last_error: z
    .string()
    .nullable()
    .describe("What went wrong last, in loopd's words (`exited with code 1`); never what the server wrote to stderr"),
});

export function toolRoutes(app: FastifyInstance, { services: { registry, toolSets, config } }: HttpDeps) {
  const typed = app.withTypeProvider<ZodTypeProvider>();
  typed.get(
    "/tools",
    {
      schema: {
        summary: "List tools",
        description:
          "Every tool a conversation may name, in a stable order: the built-ins (`run_command` last among them), then the HTTP tools of `TOOLS_FILE`, then each MCP server's tools as it last listed them (`unavailable` while the server restarts). `approval` is what applies to a tool's calls (a conversation's `approval_required` adds to it). A conversation may also name `<server>__*` for all of a server's tools, present and future.",
        operationId: "listTools",
        tags: ["tools"],
        response: {
          200: documented(z.object({ data: z.array(toolSchema) }), "The tools", {
            data: [
              {
                name: "calculate",
                description: "Evaluates an arithmetic expression.",
                input_schema: {
                  type: "object",
                  properties: { expression: { type: "string" } },
                  required: ["expression"],
                },
                source: "builtin",
                server: null,
                read_only: true,
                approval: "never",
                status: "ready",
              },
            ],
          }),
          ...requestErrorResponses,
        },
      },
    },
    async (request) => ({
      data: toolsOfTenant(registry, { tenant: request.tenant, commandTenants: config.tools.sandbox.runCommandTenants })
        .all()
        .map((tool) => ({
          name: tool.name,
          description: tool.description,
          input_schema: tool.inputSchema,
          source: sourceOf(tool),
          server: tool.server ?? null,
          read_only: tool.readOnly,
          approval: tool.approval,
          status: tool.available?.() === false ? ("unavailable" as const) : ("ready" as const),
        })),
    }),
  );
  typed.get(
    "/tools/servers",
    {
      schema: {
        summary: "List MCP servers",
        description:
          "The MCP servers of `TOOLS_FILE` and how they are doing: `starting` (its first connection), `ready`, `restarting` (it exited or dropped: started again with backoff, 1 s doubling to 30 s), `failed` (it has not started yet: tried again the same way). `restarts` counts the attempts after the first; `last_error` says what went wrong last, without the server's stderr (which may hold any tenant's tool arguments: it goes to the log, and to `GET /admin/tools/servers`).",
        operationId: "listToolServers",
        tags: ["tools"],
        response: {
          200: documented(z.object({ data: z.array(serverSchema) }), "The servers", {
            data: [
              {
                name: "fs",
                transport: "stdio",
                status: "ready",
                tools: 14,
                restarts: 0,
                exit_code: null,
                last_error: null,
              },
            ],
          }),
          ...requestErrorResponses,
        },
      },
    },
    // Every tenant shares the servers: what one tenant's call made a server write never reaches another.
    async () => ({
      data: toolSets.flatMap((set) => set.statuses()).map(({ stderr: _admins, ...shown }) => shown),
    }),
  );
}
