import { randomUUID } from "node:crypto";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { SSEServerTransport } from "@modelcontextprotocol/sdk/server/sse.js";
import { StreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/streamableHttp.js";
// @ts-expect-error a plain JS module of the tests, without types
import { createTestMcpServer } from "./test-mcp-server.mjs";

export interface HttpMcpServer {
  url: string;
  /** What it saw, in order. */
  records: Record<string, unknown>[];
  /** The requests it was sent: their method and Authorization header. */
  requests: { method: string; authorization: string | undefined }[];
  close(): Promise<void>;
}

/**
 * The test MCP server over Streamable HTTP on 127.0.0.1, one SDK transport
 * per session (the SDK's own pattern), so it can push
 * `notifications/tools/list_changed` on a session's GET stream. `json`:
 * POSTs are answered as JSON, not as event streams. Its `crash` tool
 * drops every connection and stops listening, as a dead process would.
 */
export async function startHttpMcpServer({
  port = 0,
  json = false,
}: { port?: number; json?: boolean } = {}): Promise<HttpMcpServer> {
  const records: Record<string, unknown>[] = [];
  const requests: HttpMcpServer["requests"] = [];
  const sessions = new Map<string, StreamableHTTPServerTransport>();
  const crash = () => {
    http.close();
    http.closeAllConnections();
  };
  const http: Server = createServer(async (req, res) => {
    requests.push({ method: req.method!, authorization: req.headers.authorization });
    const id = req.headers["mcp-session-id"];
    let transport = typeof id === "string" ? sessions.get(id) : undefined;
    if (!transport) {
      if (typeof id === "string")
        return res
          .writeHead(404)
          .end(JSON.stringify({ jsonrpc: "2.0", error: { code: -32001, message: "Session not found" }, id: null }));
      const fresh = new StreamableHTTPServerTransport({
        sessionIdGenerator: () => randomUUID(),
        enableJsonResponse: json,
        onsessioninitialized: (sid) => void sessions.set(sid, fresh),
      });
      fresh.onclose = () => fresh.sessionId && sessions.delete(fresh.sessionId);
      await (
        createTestMcpServer({ record: (e: Record<string, unknown>) => records.push(e), crash }) as {
          connect(t: unknown): Promise<void>;
        }
      ).connect(fresh);
      transport = fresh;
    }
    await transport.handleRequest(req, res);
  });
  return served(http, { port, path: "/mcp", records, requests, sessions });
}

/**
 * The test MCP server as an old server that speaks only HTTP+SSE (the SDK's
 * `SSEServerTransport`): a GET on /sse opens the stream, POSTs go to
 * /messages; a POST on /sse, as Streamable HTTP sends it, is a 405.
 */
export async function startSseMcpServer(): Promise<HttpMcpServer> {
  const records: Record<string, unknown>[] = [];
  const requests: HttpMcpServer["requests"] = [];
  const sessions = new Map<string, SSEServerTransport>();
  const http: Server = createServer(async (req, res) => {
    requests.push({ method: req.method!, authorization: req.headers.authorization });
    const url = new URL(req.url ?? "/", "http://localhost");
    if (req.method === "GET" && url.pathname === "/sse") {
      const transport = new SSEServerTransport("/messages", res);
      sessions.set(transport.sessionId, transport);
      res.on("close", () => sessions.delete(transport.sessionId));
      await (
        createTestMcpServer({ record: (e: Record<string, unknown>) => records.push(e), crash: () => {} }) as {
          connect(t: unknown): Promise<void>;
        }
      ).connect(transport);
      return;
    }
    const transport = sessions.get(url.searchParams.get("sessionId") ?? "");
    if (req.method === "POST" && url.pathname === "/messages" && transport)
      return transport.handlePostMessage(req, res);
    res.writeHead(405).end("this server speaks only HTTP+SSE");
  });
  return served(http, { port: 0, path: "/sse", records, requests, sessions });
}

/** Listens on 127.0.0.1; closing ends the sessions, then every connection. */
async function served(
  http: Server,
  {
    port,
    path,
    records,
    requests,
    sessions,
  }: Pick<HttpMcpServer, "records" | "requests"> & {
    port: number;
    path: string;
    sessions: Map<string, { close(): Promise<void> }>;
  },
): Promise<HttpMcpServer> {
  await new Promise<void>((resolve) => http.listen(port, "127.0.0.1", resolve));
  return {
    url: `http://127.0.0.1:${(http.address() as AddressInfo).port}${path}`,
    records,
    requests,
    async close() {
      for (const t of sessions.values()) await t.close().catch(() => {});
      http.closeAllConnections();
      await new Promise((resolve) => http.close(resolve));
    },
  };
}
