import type { Tool } from "@modelcontextprotocol/sdk/types.js";
import { z } from "zod";
import type { AgentService } from "../agents/agent-service.js";

/** An agent's tool is its name after this prefix. */
export const AGENT_TOOL_PREFIX = "agent_";

/** The agents listed on one page of `tools/list`. */
const PAGE = 100;

/** The JSON-RPC id of a `tools/call` of an agent's tool (a request that starts a run); undefined for any other message. */
export function agentCallIdOf(body: unknown): string | number | undefined {
  if (typeof body !== "object" || body === null) return undefined;
  const { method, id, params } = body as { method?: unknown; id?: unknown; params?: { name?: unknown } };
  const name = typeof params === "object" && params !== null ? params.name : undefined;
  if (method !== "tools/call" || typeof name !== "string" || !name.startsWith(AGENT_TOOL_PREFIX)) return undefined;
  return typeof id === "string" || typeof id === "number" ? id : undefined;
}

/** What an agent's tool takes. */
export const agentToolArguments = z.strictObject({
  message: z.string().min(1),
  conversation_id: z.string().min(1).max(200).optional(),
});

const agentInputSchema: Tool["inputSchema"] = {
  type: "object",
  properties: {
    message: { type: "string", description: "What to ask the agent" },
    conversation_id: {
      type: "string",
      description:
        "Continue this conversation (the conversation_id of an earlier call's _meta.loopd); absent: a new conversation",
    },
  },
  required: ["message"],
  additionalProperties: false,
};

/** The tool of an agent: its description, the message it takes, and, with a finish schema of an object, that as its output. */
export function agentTool(agent: {
  name: string;
  description: string | null;
  finish?: { result_schema?: Record<string, unknown> | undefined } | null | undefined;
}): Tool {
  const schema = agent.finish?.result_schema;
  return {
    name: `${AGENT_TOOL_PREFIX}${agent.name}`,
    title: agent.name,
    description: agent.description ?? `Runs the loopd agent ${agent.name} and answers with its reply.`,
    inputSchema: agentInputSchema,
    // MCP's output schemas describe objects; a finish result of another type comes back as text only.
    ...(schema?.type === "object" && { outputSchema: schema as Tool["outputSchema"] }),
  };
}

/** A page of the tenant's agents as tools (archived ones left out), and the cursor of the next. */
export async function agentTools(
  agents: AgentService,
  { tenant, cursor }: { tenant: string; cursor?: string | undefined },
): Promise<{ tools: Tool[]; nextCursor?: string }> {
  const page = await agents.list(tenant, { limit: PAGE, cursor });
  return {
    tools: page.data.filter((agent) => agent.archived_at === null).map(agentTool),
    ...(page.next_cursor !== null && { nextCursor: page.next_cursor }),
  };
}
