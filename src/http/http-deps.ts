import type { AgentService } from "../agents/agent-service.js";
import type { ConversationService } from "../conversations/conversation-service.js";
import type { RunManager } from "../runs/run-manager.js";
import type { Services } from "../services.js";
import type { DatabaseHealth } from "../store/db.js";
import type { StreamGate } from "./plugins/stream-gate.js";

/** A WebSocket of `/v1/responses`: how long it may go without starting a response, and the longest it stays open. */
export interface ResponseSocketTimes {
  /** @default RESPONSE_SOCKET_IDLE_MS */
  idleMs?: number;
  /** @default RESPONSE_SOCKET_MAX_LIFE_MS */
  lifeMs?: number;
}

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
  responseSocket?: ResponseSocketTimes | undefined;
  ping(): Promise<DatabaseHealth>;
  /** Bounds the open SSE streams. */
  streams: StreamGate;
  /** Where the process is in its life: `/readyz` says `starting` and `shutting_down`. */
  phase(): "starting" | "serving" | "stopping";
}
