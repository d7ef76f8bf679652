import { Server } from "@modelcontextprotocol/sdk/server/index.js";
import {
  CallToolRequestSchema,
  ErrorCode,
  ListToolsRequestSchema,
  McpError,
  type CallToolResult,
} from "@modelcontextprotocol/sdk/types.js";
import { ZodError } from "zod";
import { AppError, describeError } from "../errors.js";
import type { PendingCall, RunRow } from "../store/schema.js";
import { AGENT_TOOL_PREFIX, agentToolArguments, agentTools } from "./agent-tools.js";
import { callAgent } from "./call-agent.js";
import { callConversationTool, conversationTools } from "./conversation-tools.js";
import type { McpServerDeps } from "./mcp-server-deps.js";
import { approvalQuestion } from "./run-results.js";

const INSTRUCTIONS =
  "loopd runs agents server-side. Each agent_<name> tool runs one agent on your message and answers with its reply; " +
  "_meta.loopd names the conversation_id (pass it back to continue the conversation) and the run_id. " +
  "list_conversations and get_conversation read your conversations.";

/** A client's error as a result the caller (often a model) can read and act on. */
const errorResult = (text: string): CallToolResult => ({ content: [{ type: "text", text }], isError: true });

/**
 * One MCP session's server, acting for `tenant`: its agents as tools beside
 * the conversation tools, each call run as the HTTP routes run one. The
 * low-level `Server` (not `McpServer`): the tools are the tenant's agents,
 * read from the database at each `tools/list`, not registered up front.
 */
export function createMcpServer(deps: McpServerDeps, tenant: string): Server {
  const { agents, conversations, services } = deps;
  const server = new Server(
    { name: "loopd", version: "1" },
    { capabilities: { tools: { listChanged: false } }, instructions: INSTRUCTIONS },
  );

  server.setRequestHandler(ListToolsRequestSchema, async (request) => {
    const cursor = request.params?.cursor;
    const page = await agentTools(agents, { tenant, cursor }).catch((err: unknown) => {
      throw err instanceof AppError ? new McpError(ErrorCode.InvalidParams, err.message) : err;
    });
    // The conversation tools come first, on the first page.
    return cursor === undefined ? { ...page, tools: [...conversationTools, ...page.tools] } : page;
  });

  server.setRequestHandler(CallToolRequestSchema, async (request, extra): Promise<CallToolResult> => {
    const { name, arguments: args } = request.params;
    try {
      const answered = await callConversationTool(conversations, { tenant, name, args });
      if (answered) return answered;
      const agent = name.startsWith(AGENT_TOOL_PREFIX) ? name.slice(AGENT_TOOL_PREFIX.length) : null;
      // Another tenant's agent is as unknown as one that does not exist.
      const known = agent === null ? null : await agents.get(tenant, agent).catch(() => null);
      if (!known || known.archived_at !== null) throw new McpError(ErrorCode.InvalidParams, `Unknown tool: ${name}`);
      const { message, conversation_id } = agentToolArguments.parse(args ?? {});
      const progressToken = extra._meta?.progressToken;
      const canElicit = server.getClientCapabilities()?.elicitation !== undefined;
      return await callAgent(deps, {
        tenant,
        agent: known.name,
        message,
        conversationId: conversation_id,
        signal: extra.signal,
        taken: () => deps.taken(extra.sessionId, extra.requestId),
        ...(progressToken !== undefined && {
          progress: (p) =>
            extra.sendNotification({ method: "notifications/progress", params: { progressToken, ...p } }),
        }),
        ...(canElicit && {
          approve: async (
            call: PendingCall,
            { run, timeoutMs, signal }: { run: RunRow; timeoutMs: number; signal: AbortSignal },
          ) => {
            const answer = await server.elicitInput(
              {
                message: approvalQuestion(known.name, call, run),
                requestedSchema: {
                  type: "object",
                  properties: { reason: { type: "string", description: "Why (optional; the agent reads it)" } },
                },
              },
              { relatedRequestId: extra.requestId, signal, timeout: timeoutMs },
            );
            const reason = typeof answer.content?.reason === "string" ? answer.content.reason : undefined;
            return answer.action === "accept"
              ? { approve: true }
              : { approve: false, reason: reason ?? `the MCP client answered ${answer.action}` };
          },
        }),
      });
    } catch (err) {
      if (err instanceof McpError) throw err;
      if (err instanceof ZodError)
        return errorResult(
          `invalid arguments: ${err.issues.map((i) => `${["arguments", ...i.path].join(".")}: ${i.message}`).join("; ")}`,
        );
      if (err instanceof AppError) return errorResult(`${err.code}: ${err.message}`);
      services.log.error({ err: describeError(err), tool: name }, "an MCP tool call failed");
      throw new McpError(ErrorCode.InternalError, "internal error; see loopd's log");
    }
  });
  return server;
}
