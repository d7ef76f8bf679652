import { createModelCooldown } from "./agent/model-cooldown.js";
import { randomUUID } from "node:crypto";
import { setMaxListeners } from "node:events";
import { maxHeaderSize } from "node:http";
import Fastify, { type FastifyBaseLogger, type FastifyInstance } from "fastify";
import { serializerCompiler, validatorCompiler } from "fastify-type-provider-zod";
import type { Logger } from "pino";
import { createLogger } from "./server/create-logger.js";
import type { ModelProvider, ProviderName } from "./core/model-provider.js";
import type { Config } from "./config.js";
import { describeError } from "./errors.js";
import { createConversationService } from "./conversations/conversation-service.js";
import { createThrowawayKeeper } from "./conversations/throwaway-keeper.js";
import { createAgentService } from "./agents/agent-service.js";
import { applyAgentsFile } from "./agents/apply-agents-file.js";
import { createRunManager, type RunManager } from "./runs/run-manager.js";
import { hearOtherProcesses } from "./runs/hear-other-processes.js";
import { retentionSweeperOf, type RetentionSweeper } from "./runs/retention-sweeper.js";
import { createHistoryCache } from "./runs/history-cache.js";
import { signalsOf } from "./runs/run-signals.js";
import { createTokenRatios } from "./runs/token-ratios.js";
import { createIntake } from "./runs/intake.js";
import { createOverloadMonitor } from "./runs/overload-monitor.js";
import type { Services } from "./services.js";
import { createAgentCaller } from "./agents/call-agent.js";
import { createClientErrorHandler } from "./http/plugins/client-error-handler.js";
import { handleError, replyError } from "./http/plugins/error-handler.js";
import type { HttpDeps, ResponseSocketTimes } from "./http/http-deps.js";
import { useJsonBodies } from "./http/plugins/json-body-parser.js";
import { useNotFoundHandler } from "./http/plugins/not-found-handler.js";
import { useOpenApi } from "./http/plugins/openapi-document.js";
import { useRequestTenant } from "./http/plugins/request-tenant.js";
import { requestTimeoutOptions } from "./http/plugins/request-timeout.js";
import { connectionReaper } from "./server/reap-connections.js";
import { useInflightBodyBound } from "./http/plugins/inflight-body-bound.js";
import { useApiKeys } from "./http/plugins/api-keys.js";
import { useHostCheck } from "./http/plugins/host-check.js";
import { useCors } from "./http/plugins/cors.js";
import { createKeyCheck, makeFirstKey } from "./http/plugins/key-check.js";
import { requestIdOf } from "./http/plugins/request-id.js";
import { configuredTools, createToolSets, withResultCaps } from "./tools/configured-tools.js";
import { sharedHits, useRateLimit } from "./http/plugins/rate-limit.js";
import { streamGateFor } from "./http/plugins/stream-share.js";
import { docsRoutes } from "./http/routes/docs-routes.js";
import { resourceRoutes } from "./http/routes/resource-routes.js";
import { healthRoutes, isProbe } from "./http/routes/health-routes.js";
import { metricsRoutes } from "./http/routes/metrics-routes.js";
import { BODY_MAX_DEPTH } from "./http/schemas/shared.js";
import { providersOf } from "./providers/index.js";
import type { Database } from "./store/db.js";
import { createBroadcast } from "./store/broadcast.js";
import { createStore } from "./store/store.js";
import { sayDatabasePath } from "./server/say-database-path.js";
import type { Tool } from "./tools/define-tool.js";
import { adminRoutes } from "./http/routes/admin-routes.js";
import { usePlayground } from "./http/plugins/playground.js";
import { createToolRegistry } from "./tools/tool-registry.js";
import { toolSandboxOf } from "./tools/sandbox/choose-tool-sandbox.js";
import type { ToolSandbox } from "./tools/sandbox/tool-sandbox.js";
import type { PriceTable } from "./providers/prices/price-table.js";
import { pricesOf } from "./providers/prices/prices-file.js";
import { createMetrics } from "./telemetry/metrics.js";
import { combineTelemetry } from "./telemetry/telemetry.js";

export { createLogger, REDACT, type LoggerOptions } from "./server/create-logger.js";
import { startWebhooks } from "./webhooks/start-webhooks.js";
import type { WebhookWorker } from "./webhooks/webhook-worker.js";
import { createTenantDailyCost } from "./conversations/tenant-daily-cost.js";
import { checkDefaultModel } from "./conversations/check-model.js";

export interface AppDeps {
  config: Config;
  /** Opened and migrated by the caller, who also closes it. */
  database: Database;
  /** @default the real providers, reading their keys and base URLs from the environment */
  providers?: Record<ProviderName, ModelProvider>;
  /** @default the built-in tools (and `run_command`, when enabled); the tools of `TOOLS_FILE` come after them */
  tools?: Tool[];
  /** Where `run_command` and the programs of `TOOLS_FILE`'s sources run. @default chosen from the configuration (`TOOL_SANDBOX`) */
  sandbox?: ToolSandbox;
  /** @default the built-in prices, with `PRICES_FILE` over them */
  prices?: PriceTable;
  logger?: Logger;
  /** @default a random id: this process as the owner of run leases */
  instanceId?: string;
  /** @default 15000 */
  ssePingMs?: number;
  /** A WebSocket of `/v1/responses`'s times. @default RESPONSE_SOCKET_IDLE_MS (10 min), RESPONSE_SOCKET_MAX_LIFE_MS (60) */
  responseSocket?: ResponseSocketTimes;
  /** How often event-loop lag is sampled for the overload guard. @default 1000 */
  pressureSampleMs?: number;
  /** How long a `store: false` conversation outlives the process holding it. @default THROWAWAY_KEEP_MS (10 minutes) */
  throwawayKeepMs?: number;
}

export interface Loopd {
  app: FastifyInstance;
  services: Services;
  runs: RunManager;
  /** The sweep of idle conversations, with `RETENTION_DAYS`. */
  retention: RetentionSweeper | null;
  /** The stream gate (`MAX_STREAMS`, and each tenant's share on every instance); `sync` publishes and learns the others' now. */
  streams: Pick<ReturnType<typeof streamGateFor>, "gate" | "sync">;
  /** Graceful stop: refuse new requests, let running steps save, end streams, release leases. */
  close(): Promise<void>;
}

export async function buildApp(deps: AppDeps): Promise<Loopd> {
  const { config, database } = deps;
  const logger = deps.logger ?? createLogger(config.server.logLevel, { secrets: config.secrets });
  const metrics = createMetrics({
    describeTool: (name) => services.registry.describe(name),
    modelStates: () => services.modelCooldown.list(),
  });
  const sandbox = deps.sandbox ?? toolSandboxOf(config, { warn: (message) => logger.warn(message) });
  const toolSets = await createToolSets(config, { sandbox, log: logger, onRestart: metrics.serverRestarted });
  // Loaded only when asked for: without an endpoint, tracing costs nothing, not even its modules.
  const tracing = config.trace.otlpTracesUrl
    ? (await import("./telemetry/tracing.js")).createTracing({
        url: config.trace.otlpTracesUrl,
        onError: (err) =>
          logger.warn({ err: describeError(err) }, "could not send spans to the OTLP endpoint; they are dropped"),
        describeTool: (name) => services.registry.describe(name),
      })
    : null;
  const services: Services = {
    config,
    store: createStore(database),
    providers: deps.providers ?? providersOf(config.models.providers),
    registry: createToolRegistry(
      withResultCaps(deps.tools ?? configuredTools(config, { sandbox }), config.tools.resultMaxCharsByTool),
      toolSets.map((set) => ({ ...set, tools: () => withResultCaps(set.tools(), config.tools.resultMaxCharsByTool) })),
    ),
    toolSets,
    prices: deps.prices ?? pricesOf(config.models),
    signals: signalsOf(database),
    histories: createHistoryCache({ maxChars: config.runs.historyCacheMb * 1024 * 1024 }),
    intake: createIntake({ maxWaitMs: config.runs.intakePriorityMs }),
    tokenRatios: createTokenRatios(),
    modelCooldown: createModelCooldown(config.models.resilience.cooldown),
    broadcast: createBroadcast({
      database,
      onError: (err) => logger.warn({ err }, "LISTEN connection failed; followers fall back to polling"),
      pollIntervalMs: config.database.pollIntervalMs,
    }),
    exclusiveDatabase: database.kind === "pglite",
    instanceId: deps.instanceId ?? randomUUID(),
    log: logger,
    telemetry: combineTelemetry(tracing ? [metrics.telemetry, tracing] : [metrics.telemetry]),
    overload: createOverloadMonitor({
      maxDelayMs: config.server.maxEventLoopDelayMs,
      sampleMs: deps.pressureSampleMs,
      log: logger,
    }),
    tenantCost: createTenantDailyCost({
      limitUsd: config.ceilings.tenantDailyCostUsd,
      costSince: (tenant, since) => services.store.usage.costSince(tenant, since),
    }),
  };
  checkDefaultModel(config, services.providers);
  sayDatabasePath(database, services.broadcast, logger);
  await applyAgentsFile(services, config.agents);
  const runs = createRunManager(services, { exclusive: services.exclusiveDatabase });
  hearOtherProcesses(services, runs);
  // A delivery was written (the outbox's trigger); listened to with the others, the worker starts later.
  let webhooks: WebhookWorker | null = null;
  services.broadcast.on("loopd_webhooks", () => webhooks?.wake());
  const shutdown = new AbortController();
  // Every open stream listens for the shutdown (up to MAX_STREAMS): no leak, many listeners.
  setMaxListeners(0, shutdown.signal);
  const streamShare = streamGateFor(services, { shared: database.kind === "postgres" });
  const conversations = createConversationService(services);
  services.agentCaller = createAgentCaller({ services, runs, conversations });
  const discard = (tenant: string, id: string) => conversations.discardOverdue(tenant, id, runs);
  const throwaways = (services.throwaways = createThrowawayKeeper(services, { keepMs: deps.throwawayKeepMs, discard }));
  const http: HttpDeps = {
    services,
    conversations,
    agents: createAgentService(services),
    runs,
    shutdown: shutdown.signal,
    ssePingMs: deps.ssePingMs,
    responseSocket: deps.responseSocket,
    ping: database.ping,
    streams: streamShare.gate,
    phase: () => (stopping ? "stopping" : started ? "serving" : "starting"),
  };
  metrics.watch({
    activeRuns: () => runs.activeCount,
    pausedRuns: () => services.store.runs.countWaiting(),
    openStreams: () => http.streams.open,
    poolUse: database.poolUse,
    oldestPendingWebhookMs: async () => (await services.store.webhooks.pending()).oldestAgeMs,
    heldModelCalls: () => services.intake.held,
  });

  let stopping = false;
  let started = false;
  const app = Fastify({
    loggerInstance: logger as FastifyBaseLogger,
    bodyLimit: config.server.bodyLimitBytes,
    ...requestTimeoutOptions(config.bodies.requestTimeoutMs),
    // The client's own request id when it sent a sensible one, else a new one; on every answer and every log line of the request.
    genReqId: (req) => requestIdOf(req.headers["x-request-id"]),
    requestIdHeader: false,
    // Ids are checked by the route schemas, which name the field and the
    // limit; no path segment can be longer than the headers Node accepts.
    routerOptions: { maxParamLength: maxHeaderSize },
    // What is refused before routing (bad percent-encoding, requests Node's
    // parser rejects) and while stopping (the hook below) gets the contract's body too.
    frameworkErrors: handleError,
    clientErrorHandler: createClientErrorHandler(logger as FastifyBaseLogger),
    return503OnClosing: false,
  });
  const connections = connectionReaper(app.server);
  app.setValidatorCompiler(validatorCompiler);
  app.setSerializerCompiler(serializerCompiler);
  app.setErrorHandler(handleError);
  useJsonBodies(app, { maxDepth: BODY_MAX_DEPTH });
  useRequestTenant(app);
  // Set first, so streams (their headers written by hand) carry it too.
  app.addHook("onRequest", async (req, reply) => void reply.header("x-request-id", req.id));
  // Before CORS and the keys: a request to another name, or a foreign page's, reaches neither.
  useHostCheck(app, {
    keysRequired: config.auth.required,
    allowedHosts: config.server.allowedHosts,
    corsOrigins: config.server.corsOrigins,
  });
  await useCors(app, config.server.corsOrigins);
  useNotFoundHandler(app);
  app.addHook("onRequest", async (req, reply) => {
    // What a request carried, for debugging; REDACT keeps its credentials out.
    if (req.log.level === "debug" || req.log.level === "trace")
      req.log.debug({ headers: req.headers }, "request headers");
    // The probes answer for themselves while stopping: alive, and not ready.
    if (!stopping || isProbe(req.routeOptions.url)) return;
    reply.header("connection", "close");
    return replyError(reply, "unavailable", "the server is shutting down; try again shortly");
  });
  const keyCheck = createKeyCheck(services.store, { log: logger });
  useApiKeys(app, { required: config.auth.required, keys: keyCheck, metricsToken: config.auth.metricsToken });
  if (config.auth.required && config.auth.ratePerMin > 0)
    await useRateLimit(app, { perMinute: config.auth.ratePerMin, countHit: sharedHits(services, database) });
  useInflightBodyBound(app, { total: config.bodies.inflightBytes, perKey: config.bodies.inflightBytesPerKey });
  await useOpenApi(app);
  healthRoutes(app, http);
  metricsRoutes(app, metrics.registry);
  resourceRoutes(app, http);
  if (config.auth.adminToken)
    adminRoutes(app, http, { adminToken: config.auth.adminToken, onRevoked: () => keyCheck.forget() });
  await docsRoutes(app);
  await usePlayground(app, { enabled: config.server.playground });
  await app.ready();
  await runs.open();
  if (config.auth.required) await makeFirstKey(services.store, logger);
  started = true;
  const retention = retentionSweeperOf(services, (n) => metrics.retentionDeleted(n));
  // In the background: loopd answers while a server starts, or fails to.
  for (const set of toolSets) set.start();
  webhooks = startWebhooks(services, { metrics });

  let closing: Promise<void> | null = null;
  return {
    app,
    services,
    runs,
    retention,
    streams: streamShare,
    close: () =>
      (closing ??= (async () => {
        stopping = true;
        const server = app.close(); // new requests now get 503; open connections are awaited
        // close() drops only the keep-alive sockets idle at this moment. A
        // stream or request that ends later leaves its socket open for the
        // client to reuse, and close() would wait until the client drops it;
        // as it would for a socket that never sent a request (reap-connections.ts).
        const reap = setInterval(() => connections.reap(), 100);
        try {
          await retention?.close();
          await runs.close({ timeoutMs: config.server.shutdownTimeoutMs });
          await webhooks?.close();
          shutdown.abort();
          await streamShare.close();
          await server;
        } finally {
          clearInterval(reap);
          await services.broadcast.close();
          await Promise.all(toolSets.map((set) => set.close()));
          await keyCheck.close();
          await throwaways.close();
          // After the runs stopped: their last spans go out too.
          await services.telemetry.close();
          services.overload.close();
          // prom-client's GC observer keeps the registry for good; its gauges would keep the database.
          metrics.registry.clear();
        }
      })()),
  };
}
