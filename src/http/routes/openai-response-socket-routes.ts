import websocket from "@fastify/websocket";
import type { FastifyInstance, FastifyRequest } from "fastify";
import { AppError } from "../../errors.js";
import type { HttpDeps } from "../http-deps.js";
import { messageBodyLimit } from "../plugins/message-body-limit.js";
import { serveResponseSocket } from "../response-socket.js";

/**
 * `GET /v1/responses` upgraded to a WebSocket: OpenAI's WebSocket mode of
 * the Responses API (`response-socket.ts`). The upgrade request passes the
 * hooks every request does (host, keys, rate limit, shutdown), and the socket
 * takes a place in its tenant's stream share for its whole life: past it the
 * upgrade is refused with `429 too_many_streams` (`503` when the server holds
 * `MAX_STREAMS`). A message is at most the bytes `POST /v1/responses` takes
 * (a larger one closes the socket with 1009). A plain GET (no upgrade) is
 * answered as an unknown route. Registered in a scope of its own, so the
 * plugin's hooks touch no other route.
 */
export function openAiResponseSocketRoutes(app: FastifyInstance, deps: HttpDeps): void {
  // An upgrade refused before the plugin's hooks (no key, another host, the
  // server stopping) is answered over HTTP on a connection no parser reads any
  // more: end it, or it stays open for as long as the client likes.
  app.addHook("onResponse", async (req) => {
    // Node marks a request that came with the `upgrade` event (undocumented, so not in its types).
    if ((req.raw as { upgrade?: boolean }).upgrade === true) req.raw.socket.destroy();
  });
  // Each response.create counts as a request of the key's `RATE_LIMIT_PER_MIN`, as a POST would (none when it is off).
  const limiter = app.hasDecorator("createRateLimit") ? app.createRateLimit() : null;
  void app.register(async (scope) => {
    await scope.register(websocket, {
      options: { maxPayload: messageBodyLimit(deps.services.config) },
      // Not when fastify begins to close: each socket closes at the shutdown
      // signal, after the events its running response saved (serveResponseSocket).
      preClose: (done) => done(),
      errorHandler: (err, socket, req) => {
        req.log.info({ err: { message: err.message } }, "a WebSocket of /v1/responses failed");
        socket.terminate();
      },
    });
    scope.route({
      method: "GET",
      url: "/v1/responses",
      schema: { hide: true },
      preHandler: async (req) => {
        if (!req.ws) return;
        const release = deps.streams.take(req.tenant);
        // Given back when the connection ends, whether the upgrade went through or not.
        req.raw.socket.once("close", release);
      },
      handler: (_req, reply) => reply.callNotFound(),
      wsHandler: (socket, req) =>
        serveResponseSocket(deps, socket, {
          tenant: req.tenant,
          log: req.log,
          idleMs: deps.responseSocket?.idleMs,
          lifeMs: deps.responseSocket?.lifeMs,
          ...(limiter && { checkRate: () => rateRefusal(limiter, req) }),
        }),
    });
  });
}

/** A `response.create` counted in its key's window: the `429 rate_limited` past it, as a request gets; null within it. */
async function rateRefusal(
  limiter: ReturnType<FastifyInstance["createRateLimit"]>,
  req: FastifyRequest,
): Promise<AppError | null> {
  const { isAllowed, isExceeded, max, ttlInSeconds } = (await limiter(req)) as {
    isAllowed: boolean;
    isExceeded?: boolean;
    max?: number;
    ttlInSeconds?: number;
  };
  if (isAllowed || !isExceeded) return null;
  return new AppError(
    "rate_limited",
    `more than ${max} requests a minute with this API key; try again in ${ttlInSeconds} s`,
    { limit: max, retry_after_s: ttlInSeconds },
  );
}
