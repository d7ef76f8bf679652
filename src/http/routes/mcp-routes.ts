import type { FastifyInstance, FastifyReply, FastifyRequest } from "fastify";
import { isInitializeRequest } from "@modelcontextprotocol/sdk/types.js";
import { admit } from "../../conversations/send-message.js";
import { AppError } from "../../errors.js";
import { AGENT_TOOL_PREFIX, agentCallIdOf } from "../../mcp-server/agent-tools.js";
import { createMcpServer } from "../../mcp-server/create-mcp-server.js";
import { createMcpSessions } from "../../mcp-server/mcp-sessions.js";
import type { HttpDeps } from "../http-deps.js";
import { bytesOf } from "../openapi.js";
import { intakeHooks, taken } from "../plugins/intake-hooks.js";
import { errorResponses } from "../schemas/errors.js";

const DESCRIPTION =
  "loopd as an MCP server (Streamable HTTP, stateful, resumable): the tenant's agents as tools `agent_<name>`, with `list_conversations` and `get_conversation`. " +
  "POST `initialize` opens a session (its id in `mcp-session-id`); every later request carries that header. See docs/mcp-server.md.";

/** What the transport needs a POST to accept; checked before an initialize opens a session (and takes a place at the caps). */
const acceptsMcp = (accept: string | undefined) =>
  (accept ?? "").includes("application/json") && (accept ?? "").includes("text/event-stream");

/** Whether a POST's message (or one of its batch) calls an agent's tool. */
const callsAnAgent = (body: unknown): boolean =>
  (Array.isArray(body) ? body : [body]).some((message: unknown) => {
    const { method, params } = (message ?? {}) as { method?: unknown; params?: { name?: unknown } };
    return method === "tools/call" && typeof params?.name === "string" && params.name.startsWith(AGENT_TOOL_PREFIX);
  });

/** How long a stopping server lets calls in flight send their answer before it closes the sessions. */
const ANSWER_WHILE_STOPPING_MS = 2000;

/**
 * `/mcp`: each request is handed, raw, to its session's transport (the MCP
 * SDK writes the answer, JSON or an SSE stream). Keys, tenants, the host
 * check and rate limits apply as on every route, before the handler; a
 * session answers only its own tenant.
 */
export function mcpRoutes(app: FastifyInstance, http: HttpDeps) {
  const { services, streams } = http;
  const inflight = new Set<Promise<unknown>>();
  // Agent calls being taken (the intake), by session and JSON-RPC id: the call says when its run started.
  const takings = new Map<string, FastifyRequest>();
  const takingKey = (sessionId: string | undefined, requestId: string | number) =>
    `${sessionId ?? ""}\n${JSON.stringify(requestId)}`;
  const sessions = createMcpSessions({
    ...services.config.mcpSessions,
    serverOf: (tenant) =>
      createMcpServer(
        {
          services,
          runs: http.runs,
          agents: http.agents,
          conversations: http.conversations,
          shutdown: http.shutdown,
          takeStream: (t) => streams.take(t),
          taken: (sessionId, requestId) => {
            const req = takings.get(takingKey(sessionId, requestId));
            if (req) taken(req);
          },
        },
        tenant,
      ),
  });
  http.shutdown.addEventListener(
    "abort",
    () => {
      // Calls in flight answer first (with their run as it stands), then the sessions and their streams end.
      const answered = Promise.allSettled([...inflight]);
      const bound = new Promise((resolve) => setTimeout(resolve, ANSWER_WHILE_STOPPING_MS).unref());
      void Promise.race([answered, bound]).then(() => sessions.close());
    },
    { once: true },
  );

  const handle = async (req: FastifyRequest, reply: FastifyReply) => {
    const id = req.headers["mcp-session-id"];
    const open = typeof id !== "string" && req.method === "POST" && isInitializeRequest(req.body);
    if (typeof id !== "string" && !open)
      throw new AppError(
        "invalid_request",
        "an MCP request needs the mcp-session-id header that the answer to initialize gave; send initialize first",
        { field: "headers.mcp-session-id" },
      );
    // Refused before the transport takes the request: the refusal in the contract's shape.
    if (open && !acceptsMcp(req.headers.accept))
      throw new AppError(
        "invalid_request",
        "an MCP client accepts both application/json and text/event-stream: send them in the Accept header",
        { field: "headers.accept" },
      );
    const session = typeof id === "string" ? sessions.find(id, req.tenant) : await sessions.create(req.tenant);
    // A call of an agent starts a run: refused at once while the server sheds load (503, Retry-After), as on every route.
    if (req.method === "POST" && callsAnAgent(req.body)) admit(services);
    // A GET is the session's own stream of server messages: it holds a stream's place while open.
    const release = req.method === "GET" ? streams.take(req.tenant) : undefined;
    if (release) reply.raw.once("close", release);
    reply.hijack();
    // What the hooks set (the request id, the rate limit's headers) goes out with the transport's answer.
    for (const [name, value] of Object.entries(reply.getHeaders()))
      if (value !== undefined) reply.raw.setHeader(name, value);
    const callId = typeof id === "string" ? agentCallIdOf(req.body) : undefined;
    const key = callId === undefined ? undefined : takingKey(id as string, callId);
    if (key) takings.set(key, req);
    const handled = sessions.serve(session, req.raw, reply.raw, req.body).finally(() => {
      if (key && takings.get(key) === req) takings.delete(key);
    });
    if (req.method !== "POST") return handled;
    // A call in flight answers a stopping server before the sessions end.
    const tracked = handled.finally(() => inflight.delete(tracked));
    inflight.add(tracked);
    await tracked;
  };
  for (const method of ["POST", "GET", "DELETE"] as const)
    app.route({
      method,
      url: "/mcp",
      // A call of an agent's tool starts a run: taken before the next steps of the runs already going, as `POST …/messages` is.
      ...(method === "POST" && intakeHooks(services.intake, (req) => agentCallIdOf(req.body) !== undefined)),
      schema: {
        summary: { POST: "MCP: send a message", GET: "MCP: the session's stream", DELETE: "MCP: end the session" }[
          method
        ],
        description: DESCRIPTION,
        operationId: { POST: "mcpPost", GET: "mcpStream", DELETE: "mcpEnd" }[method],
        tags: ["mcp-server"],
        response: {
          200: bytesOf(
            "MCP's answer as the SDK's transport writes it: a JSON-RPC message, or an SSE stream of them (`202` with no body for a notification)",
            ["application/json", "text/event-stream"],
          ),
          ...errorResponses,
        },
      },
      handler: handle,
    });
}
