import type { AgentService } from "../agents/agent-service.js";
import type { ConversationService } from "../conversations/conversation-service.js";
import type { RunManager } from "../runs/run-manager.js";
import type { Services } from "../services.js";
import type { DatabaseHealth } from "../store/db.js";
import type { StreamGate } from "./plugins/stream-gate.js";

/** What the routes are handed; routes stay thin and call the use cases. */
export interface HttpDeps {
  services: Services;
  conversations: ConversationService;
  agents: AgentService;
  runs: RunManager;
  /** Aborted when the server begins to shut down. */
  shutdown: AbortSignal;
  /** @default 15000 */
  ssePingMs?: number;
  /** How long a WebSocket of `/v1/responses` may go without starting a response. @default RESPONSE_SOCKET_IDLE_MS */
  responseSocketIdleMs?: number;
  /** The longest a WebSocket of `/v1/responses` stays open. @default RESPONSE_SOCKET_MAX_LIFE_MS */
  responseSocketLifeMs?: number;
  ping(): Promise<DatabaseHealth>;
  /** Bounds the open SSE streams. */
  streams: StreamGate;
  /** Where the process is in its life: `/readyz` says `starting` and `shutting_down`. */
  phase(): "starting" | "serving" | "stopping";
}
