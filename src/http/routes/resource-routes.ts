import type { FastifyInstance } from "fastify";
import type { HttpDeps } from "../http-deps.js";
import { attachmentRoutes } from "./attachment-routes.js";
import { conversationRoutes } from "./conversation-routes.js";
import { messageRoutes } from "./message-routes.js";
import { runRoutes } from "./run-routes.js";
import { toolRoutes } from "./tool-routes.js";
import { traceRoutes } from "./trace-routes.js";
import { uiChatRoutes } from "./ui-chat-routes.js";
import { usageRoutes } from "./usage-routes.js";
import { webhookRoutes } from "./webhook-routes.js";

/** The routes of a tenant's resources (every one behind its key): conversations and what they hold, runs, traces, tools, usage. */
export function resourceRoutes(app: FastifyInstance, http: HttpDeps): void {
  conversationRoutes(app, http);
  messageRoutes(app, http);
  attachmentRoutes(app, http);
  runRoutes(app, http);
  uiChatRoutes(app, http);
  traceRoutes(app, http);
  webhookRoutes(app, http);
  toolRoutes(app, http);
  usageRoutes(app, http);
}
