import type { FastifyInstance } from "fastify";
import type { ZodTypeProvider } from "fastify-type-provider-zod";
import type { HttpDeps } from "../http-deps.js";
import {
  agentPage,
  agentParams,
  agentVersionParams,
  createAgentBody,
  theAgent,
  updateAgentBody,
} from "../schemas/agents.js";
import {
  bodyErrorResponses,
  bodyLimitResponses,
  errorAnswer,
  errorResponses,
  requestErrorResponses,
} from "../schemas/errors.js";
import { listQuery } from "../schemas/shared.js";

const tags = ["agents"];
const notFound = {
  404: errorAnswer(
    "`not_found`: no such agent (another tenant's is unknown too), or no such version",
    "not_found",
    "agent support does not exist",
  ),
};
const fromFile = errorAnswer(
  "`agent_from_file`: the agent is defined by `AGENTS_FILE`, which alone changes it",
  "agent_from_file",
  "agent support is defined by AGENTS_FILE: change it there",
  { name: "support" },
);

export function agentRoutes(app: FastifyInstance, { agents }: HttpDeps) {
  const r = app.withTypeProvider<ZodTypeProvider>();

  r.post(
    "/agents",
    {
      schema: {
        summary: "Create an agent",
        description:
          "A named configuration conversations start from, at version 1. Every field is checked as it is on a conversation (an unknown tool, a bad schema: a 400 naming the field); `name` is 1–48 of a-z, 0-9, _ and -, unique in the tenant.",
        operationId: "createAgent",
        tags,
        body: createAgentBody,
        response: {
          201: theAgent("The agent, at version 1"),
          ...requestErrorResponses,
          ...bodyLimitResponses,
          409: errorAnswer(
            "`agent_exists`: the tenant has an agent by that name",
            "agent_exists",
            "agent support already exists",
            {
              field: "body.name",
              name: "support",
            },
          ),
        },
      },
    },
    async (req, reply) => reply.code(201).send(await agents.create(req.tenant, req.body)),
  );

  r.get(
    "/agents",
    {
      schema: {
        summary: "List agents",
        description:
          "Newest created first, each at its latest version; pass `next_cursor` as `cursor` for the next page.",
        operationId: "listAgents",
        tags,
        querystring: listQuery,
        response: { 200: agentPage("A page of agents"), ...requestErrorResponses },
      },
    },
    (req) => agents.list(req.tenant, req.query),
  );

  r.get(
    "/agents/:name",
    {
      schema: {
        summary: "Get an agent",
        description: "At its latest version.",
        operationId: "getAgent",
        tags,
        params: agentParams,
        response: { 200: theAgent("The agent"), ...errorResponses, ...notFound },
      },
    },
    (req) => agents.get(req.tenant, req.params.name),
  );

  r.get(
    "/agents/:name/versions",
    {
      schema: {
        summary: "List an agent's versions",
        description:
          "Newest version first; pass `next_cursor` as `cursor` for the next page. Versions are never changed.",
        operationId: "listAgentVersions",
        tags,
        params: agentParams,
        querystring: listQuery,
        response: { 200: agentPage("A page of the agent's versions"), ...errorResponses, ...notFound },
      },
    },
    (req) => agents.versions(req.tenant, req.params.name, req.query),
  );

  r.get(
    "/agents/:name/versions/:version",
    {
      schema: {
        summary: "Get a version of an agent",
        operationId: "getAgentVersion",
        tags,
        params: agentVersionParams,
        response: { 200: theAgent("The agent at that version"), ...errorResponses, ...notFound },
      },
    },
    (req) => agents.get(req.tenant, req.params.name, req.params.version),
  );

  r.patch(
    "/agents/:name",
    {
      schema: {
        summary: "Change an agent",
        description:
          "`version` is the version the client last saw. A change to the configuration (a list's order too) makes the next version; the same configuration answers the same version, and makes none. Fields left out keep their value.",
        operationId: "updateAgent",
        tags,
        params: agentParams,
        body: updateAgentBody,
        response: {
          200: theAgent("The agent at its latest version"),
          ...bodyErrorResponses,
          ...notFound,
          409: errorAnswer(
            "`version_conflict`: `version` is not the latest (`details.current_version`); or `agent_from_file`: the agent is `AGENTS_FILE`'s",
            "version_conflict",
            "agent support is at version 3, not 2: read it again and change that",
            { current_version: 3 },
          ),
        },
      },
    },
    (req) => agents.update(req.tenant, req.params.name, req.body),
  );

  r.delete(
    "/agents/:name",
    {
      schema: {
        summary: "Archive an agent",
        description:
          "Sets `archived_at`: new conversations from it are refused (`409 agent_archived`); conversations already started from it go on. Its versions stay readable.",
        operationId: "archiveAgent",
        tags,
        params: agentParams,
        response: { 200: theAgent("The agent, archived"), ...errorResponses, ...notFound, 409: fromFile },
      },
    },
    (req) => agents.archive(req.tenant, req.params.name),
  );
}
