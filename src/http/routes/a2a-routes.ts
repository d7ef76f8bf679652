import type { FastifyInstance, FastifyRequest } from "fastify";
import type { ZodTypeProvider } from "fastify-type-provider-zod";
import { z } from "zod";
import { agentCardJson, agentCardOf } from "../../a2a/agent-card.js";
import { agentCards, liveAgent } from "../../a2a/agent-cards.js";
import { createAgentTaskHandler } from "../../a2a/agent-task-handler.js";
import { answerJsonRpc, methodOf, RUN_STARTING_METHODS, STREAMING_METHODS } from "../../a2a/json-rpc-endpoint.js";
import type { AppError } from "../../errors.js";
import { linkedAbort } from "../../util/linked-abort.js";
import type { HttpDeps } from "../http-deps.js";
import { documented, jsonOrEventStream } from "../openapi.js";
import { intakeHooks, taken } from "../plugins/intake-hooks.js";
import { agentParams } from "../schemas/agents.js";
import { bodyErrorResponses, errorAnswer, errorResponses } from "../schemas/errors.js";
import { streamFrames } from "../sse-frames.js";

const tags = ["a2a"];
const notFound = {
  404: errorAnswer(
    "`not_found`: no such agent (another tenant's, or an archived one, is unknown too)",
    "not_found",
    "agent support does not exist",
  ),
};

const card = z.looseObject({
  name: z.string(),
  description: z.string(),
  supportedInterfaces: z.array(z.object({ url: z.string(), protocolBinding: z.string(), protocolVersion: z.string() })),
  url: z.string(),
  protocolVersion: z.string(),
  version: z.string(),
  capabilities: z.object({ streaming: z.boolean(), pushNotifications: z.boolean() }),
  skills: z.array(
    z.looseObject({ id: z.string(), name: z.string(), description: z.string(), tags: z.array(z.string()) }),
  ),
});
const cardExample = {
  name: "support",
  description: "Answers questions about orders.",
  supportedInterfaces: [
    { url: "http://localhost:3000/a2a/support", protocolBinding: "JSONRPC", protocolVersion: "1.0" },
    { url: "http://localhost:3000/a2a/support", protocolBinding: "JSONRPC", protocolVersion: "0.3" },
  ],
  provider: { organization: "loopd", url: "http://localhost:3000" },
  version: "3",
  capabilities: { streaming: true, pushNotifications: false },
  defaultInputModes: ["text/plain", "application/json"],
  defaultOutputModes: ["text/plain", "application/json"],
  skills: [{ id: "support", name: "support", description: "Answers questions about orders.", tags: ["loopd"] }],
  url: "http://localhost:3000/a2a/support",
  protocolVersion: "0.3.0",
  preferredTransport: "JSONRPC",
};

const jsonRpcRequest = z.looseObject({
  jsonrpc: z.literal("2.0"),
  method: z
    .string()
    .max(100)
    .describe(
      "`SendMessage`, `SendStreamingMessage`, `GetTask`, `CancelTask`, `SubscribeToTask`, or 0.3's `message/send`, `message/stream`, `tasks/get`, `tasks/cancel`, `tasks/resubscribe`",
    ),
  id: z.union([z.string().max(200), z.number(), z.null()]).optional(),
  params: z.record(z.string(), z.unknown()).optional(),
});
const jsonRpcResponse = z.object({
  jsonrpc: z.string(),
  id: z.union([z.string(), z.number(), z.null()]),
  result: z.unknown().optional(),
  error: z.unknown().optional().describe("`{code, message, data?}`: -32001 task not found, -32602 invalid params …"),
});

/** The scheme and host the caller reached loopd by: where its cards point. */
const baseUrlOf = (req: FastifyRequest) => `${req.protocol}://${req.host}`;

/** loopd's agents over A2A: a card per agent, the tenant's cards listed, each agent's JSON-RPC endpoint. */
export function a2aRoutes(app: FastifyInstance, deps: HttpDeps) {
  const { services } = deps;
  const r = app.withTypeProvider<ZodTypeProvider>();

  r.get(
    "/.well-known/agent-card.json",
    {
      schema: {
        summary: "List the tenant's A2A agent cards",
        description:
          "The A2A card of each of the caller's agents (archived ones left out), newest first, at most 1,000. Each card's endpoint is `/a2a/:name`.",
        operationId: "listAgentCards",
        tags,
        response: {
          200: documented(z.object({ agents: z.array(card) }), "The cards", { agents: [cardExample] }),
          ...errorResponses,
        },
      },
    },
    async (req) => ({ agents: await agentCards(services.store, { tenant: req.tenant, baseUrl: baseUrlOf(req) }) }),
  );

  r.get(
    "/a2a/:name/.well-known/agent-card.json",
    {
      schema: {
        summary: "Get an agent's A2A card",
        description:
          "Protocol 1.0's card (`supportedInterfaces`: JSON-RPC at 1.0 and 0.3), with 0.3's `url`, `protocolVersion` and `preferredTransport` beside it.",
        operationId: "getAgentCard",
        tags,
        params: agentParams,
        response: { 200: documented(card, "The agent's card", cardExample), ...errorResponses, ...notFound },
      },
    },
    async (req) =>
      agentCardJson(await liveAgent(services.store, { tenant: req.tenant, name: req.params.name }), {
        baseUrl: baseUrlOf(req),
      }),
  );

  r.post(
    "/a2a/:name",
    {
      // A message starts a run: taken before the next steps of the runs already going, as `POST …/messages` is.
      ...intakeHooks(services.intake, (req) => RUN_STARTING_METHODS.has(methodOf(req.body))),
      schema: {
        summary: "Call an agent over A2A (JSON-RPC)",
        description:
          "A2A's JSON-RPC binding, protocol 1.0 and 0.3. A message starts a task, which is a loopd run (same id), in a context, which is a conversation (same id; a message without `contextId` starts one from the agent). A task paused for an approval is `input-required`; the next message in its context answers it. Streaming methods answer server-sent events, one JSON-RPC response each.",
        operationId: "callAgentA2A",
        tags,
        params: agentParams,
        body: jsonRpcRequest,
        response: {
          200: jsonOrEventStream(jsonRpcResponse, "A JSON-RPC response; or, streaming, one per event", {
            jsonrpc: "2.0",
            id: 1,
            result: { task: { id: "run_123", contextId: "conv_123", status: { state: "TASK_STATE_COMPLETED" } } },
          }),
          ...bodyErrorResponses,
          ...notFound,
        },
      },
    },
    async (req, reply) => {
      const streaming = STREAMING_METHODS.has(methodOf(req.body));
      const release = streaming ? deps.streams.take(req.tenant) : undefined;
      const gone = new AbortController();
      reply.raw.once("close", () => gone.abort());
      const stop = linkedAbort(gone.signal, deps.shutdown);
      // A new run refused while the server sheds load is the contract's 503 with Retry-After, as on every route.
      let shed: AppError | undefined;
      try {
        const agent = await liveAgent(services.store, { tenant: req.tenant, name: req.params.name });
        const agentCard = agentCardOf(agent, { baseUrl: baseUrlOf(req) });
        const handler = createAgentTaskHandler(deps, {
          tenant: req.tenant,
          agent,
          card: agentCard,
          signal: stop.signal,
          onTaken: () => taken(req),
          onShed: (err) => (shed = err),
        });
        const version = req.headers["a2a-version"];
        const answer = await answerJsonRpc(handler, agentCard, {
          body: req.body,
          version: typeof version === "string" ? version : undefined,
        });
        if (answer.type === "json") {
          release?.();
          if (shed) throw shed;
          return reply.send(answer.body);
        }
        return await streamFrames(reply, {
          frames: answer.frames,
          errorOf: answer.errorOf,
          gone: gone.signal,
          pingMs: deps.ssePingMs,
          release,
          refusal: () => shed,
        });
      } catch (err) {
        release?.();
        throw err;
      } finally {
        stop.dispose();
      }
    },
  );
}
