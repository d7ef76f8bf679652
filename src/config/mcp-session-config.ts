import { intFromEnv } from "../util/env-values.js";

/** The variables of loopd's own MCP server at `/mcp` (composed into config.ts's). */
export const mcpSessionVariables = {
  /** MCP sessions one process keeps at most, every tenant's together. */
  MCP_MAX_SESSIONS: intFromEnv(1000, { max: 100_000 }),
  /** MCP sessions one tenant keeps on one process at most. */
  MCP_MAX_SESSIONS_PER_TENANT: intFromEnv(100, { max: 100_000 }),
  /** Seconds an MCP session may go unused (no request, no open stream) before it is closed. */
  MCP_SESSION_IDLE_S: intFromEnv(1800, { max: 7 * 24 * 3600 }),
};

export function mcpSessionsOf(e: {
  MCP_MAX_SESSIONS: number;
  MCP_MAX_SESSIONS_PER_TENANT: number;
  MCP_SESSION_IDLE_S: number;
}) {
  return {
    /** Past it, a new session takes the place of the least recently used idle one, or is refused (503) when none is idle. */
    maxSessions: e.MCP_MAX_SESSIONS,
    /** Past it, a tenant's new session takes the place of its least recently used idle one, or is refused (429). */
    maxSessionsPerTenant: e.MCP_MAX_SESSIONS_PER_TENANT,
    idleMs: e.MCP_SESSION_IDLE_S * 1000,
  };
}
