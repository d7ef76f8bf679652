import type { AgentService } from "../agents/agent-service.js";
import type { ConversationService } from "../conversations/conversation-service.js";
import type { RunManager } from "../runs/run-manager.js";
import type { Services } from "../services.js";

/** What loopd's MCP server is handed: the use cases the HTTP routes call, and the stream bound. */
export interface McpServerDeps {
  services: Services;
  runs: RunManager;
  agents: AgentService;
  conversations: ConversationService;
  /** Aborted when the server begins to stop: a call in flight answers with the run as it stands. */
  shutdown: AbortSignal;
  /** Takes a place among the open streams for a call (release it when the call ends); throws at the bound. */
  takeStream(tenant: string): () => void;
  /** An agent call's run started, or was refused: the request (by session and JSON-RPC id) is no longer put before the runs going (the intake). */
  taken(sessionId: string | undefined, requestId: string | number): void;
}
