import { randomUUID } from "node:crypto";
import type { IncomingMessage, ServerResponse } from "node:http";
import type { Server } from "@modelcontextprotocol/sdk/server/index.js";
import { StreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/streamableHttp.js";
import { AppError } from "../errors.js";
import { createSessionEventStore } from "./session-event-store.js";

export interface McpSession {
  id: string;
  tenant: string;
  server: Server;
  transport: StreamableHTTPServerTransport;
  /** Requests and streams of the session open now: while any is, it is not idle. */
  open: number;
  lastUsed: number;
}

export interface McpSessionOptions {
  maxSessions: number;
  maxSessionsPerTenant: number;
  idleMs: number;
  /** A session's own MCP server, acting for `tenant`. */
  serverOf(tenant: string): Server;
  /** @default Date.now */
  now?: () => number;
}

/**
 * The MCP sessions of this process (Streamable HTTP, stateful): each is a
 * server and a transport of its own, bound to the tenant that opened it. A
 * session id is answered only with that tenant's key; with another's it is
 * unknown (404), as an expired one is. Bounded: at a cap (the process's or
 * the tenant's), a new session closes the least recently used idle one, and
 * is refused when none is idle; a session unused for `idleMs` is closed.
 */
export function createMcpSessions({
  maxSessions,
  maxSessionsPerTenant,
  idleMs,
  serverOf,
  now = Date.now,
}: McpSessionOptions) {
  const sessions = new Map<string, McpSession>();
  const close = (session: McpSession) => {
    if (sessions.get(session.id) !== session) return;
    sessions.delete(session.id);
    // The server closes its transport.
    void session.server.close().catch(() => {});
  };
  const idleOnes = (of: (s: McpSession) => boolean) =>
    [...sessions.values()].filter((s) => s.open === 0 && of(s)).sort((a, b) => a.lastUsed - b.lastUsed);
  const closeIdle = () => {
    for (const session of idleOnes(() => true)) if (now() - session.lastUsed >= idleMs) close(session);
  };
  const sweep = setInterval(closeIdle, Math.min(idleMs, 60_000));
  sweep.unref();

  /** Makes room for one more session of `tenant`, or throws. */
  const makeRoom = (tenant: string) => {
    const ofTenant = (s: McpSession) => s.tenant === tenant;
    if ([...sessions.values()].filter(ofTenant).length >= maxSessionsPerTenant) {
      const oldest = idleOnes(ofTenant)[0];
      if (!oldest)
        throw new AppError(
          "too_many_sessions",
          `this tenant already holds its ${maxSessionsPerTenant} MCP sessions on this server, each in use; end one (DELETE /mcp) or try again shortly`,
          { max_sessions_per_tenant: maxSessionsPerTenant },
        );
      close(oldest);
    }
    if (sessions.size >= maxSessions) {
      const oldest = idleOnes(() => true)[0];
      if (!oldest)
        throw new AppError(
          "unavailable",
          `this server already holds its maximum of ${maxSessions} MCP sessions, each in use; try again shortly`,
          { max_sessions: maxSessions },
        );
      close(oldest);
    }
  };

  return {
    get size() {
      return sessions.size;
    },

    /** Closes the sessions unused for `idleMs` (done every minute, or every `idleMs` when shorter). */
    closeIdle,

    /** A new session of `tenant`, connected (its id is given out with the answer to `initialize`); throws at the caps. */
    async create(tenant: string): Promise<McpSession> {
      makeRoom(tenant);
      const id = randomUUID();
      const transport = new StreamableHTTPServerTransport({
        sessionIdGenerator: () => id,
        eventStore: createSessionEventStore(),
      });
      const session: McpSession = { id, tenant, server: serverOf(tenant), transport, open: 0, lastUsed: now() };
      transport.onclose = () => close(session);
      sessions.set(id, session);
      await session.server.connect(transport);
      return session;
    },

    /** The live session `id` of `tenant`; throws 404 for any other (unknown, ended, expired, another tenant's). */
    find(id: string, tenant: string): McpSession {
      const session = sessions.get(id);
      if (!session || session.tenant !== tenant)
        throw new AppError(
          "not_found",
          "MCP session unknown: it ended, expired, or belonged to a server that restarted; send initialize again for a new one",
        );
      session.lastUsed = now();
      return session;
    },

    /** Hands a request of `session` to its transport, which answers it. */
    async serve(session: McpSession, req: IncomingMessage, res: ServerResponse, body: unknown): Promise<void> {
      session.open++;
      res.once("close", () => {
        session.open--;
        session.lastUsed = now();
      });
      await session.transport.handleRequest(req, res, body);
      // An initialize the transport refused opened nothing: its session goes at once, not when idle.
      if (session.transport.sessionId === undefined) close(session);
    },

    /** Ends every session (the server is stopping). */
    async close(): Promise<void> {
      clearInterval(sweep);
      const all = [...sessions.values()];
      sessions.clear();
      await Promise.all(all.map((s) => s.server.close().catch(() => {})));
    },
  };
}

export type McpSessions = ReturnType<typeof createMcpSessions>;
