import type { FastifyInstance } from "fastify";
import type { HttpDeps } from "../http-deps.js";
import { a2aRoutes } from "./a2a-routes.js";
import { agentRoutes } from "./agent-routes.js";
import { attachmentRoutes } from "./attachment-routes.js";
import { conversationRoutes } from "./conversation-routes.js";
import { mcpRoutes } from "./mcp-routes.js";
import { messageRoutes } from "./message-routes.js";
import { modelRoutes } from "./model-routes.js";
import { openaiConversationRoutes } from "./openai-conversation-routes.js";
import { openAiCompactRoutes } from "./openai-compact-routes.js";
import { openAiResponseRoutes } from "./openai-response-routes.js";
import { openAiResponseSocketRoutes } from "./openai-response-socket-routes.js";
import { runRoutes } from "./run-routes.js";
import { toolRoutes } from "./tool-routes.js";
import { traceRoutes } from "./trace-routes.js";
import { uiChatRoutes } from "./ui-chat-routes.js";
import { usageRoutes } from "./usage-routes.js";
import { webhookRoutes } from "./webhook-routes.js";

/** The routes of a tenant's resources (every one behind its key): agents (and over A2A), conversations and what they hold, runs, traces, tools, usage, the models' health; and the agents as MCP tools (`/mcp`). */
export function resourceRoutes(app: FastifyInstance, http: HttpDeps): void {
  agentRoutes(app, http);
  conversationRoutes(app, http);
  messageRoutes(app, http);
  attachmentRoutes(app, http);
  runRoutes(app, http);
  uiChatRoutes(app, http);
  traceRoutes(app, http);
  webhookRoutes(app, http);
  toolRoutes(app, http);
  usageRoutes(app, http);
  modelRoutes(app, http);
  mcpRoutes(app, http);
  a2aRoutes(app, http);
  openAiResponseRoutes(app, http);
  openAiResponseSocketRoutes(app, http);
  openAiCompactRoutes(app, http);
  openaiConversationRoutes(app, http);
}
