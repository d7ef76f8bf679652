import { buildApp, createLogger } from "./app.js";
import { collectGarbageWhenIdle } from "./server/collect-garbage-when-idle.js";
import { pricesOf } from "./providers/prices/prices-file.js";
import { loadConfig, type Config } from "./config.js";
import { describeError, OperatorError } from "./errors.js";
import { checkListenAddress, explainListenError } from "./server/listen-address.js";
import { makeDirectory } from "./util/make-directory.js";
import { canCall, PROVIDERS } from "./providers/registry.js";
import { PROVIDER_NAMES } from "./core/model-provider.js";
import { openDatabase } from "./store/db.js";
import { explainDatabaseError } from "./store/explain-database-error.js";
import type { Tool } from "./tools/define-tool.js";
import { toolSandboxOf } from "./tools/sandbox/choose-tool-sandbox.js";

export interface ServeOptions {
  /** @default process.env */
  env?: NodeJS.ProcessEnv;
  /** Tools to serve instead of the built-in ones (`createBuiltinTools()` plus your own `defineTool`s). @default the built-in tools */
  tools?: Tool[];
  /** How long a `store: false` conversation outlives a process killed while holding it. @default 10 minutes */
  throwawayKeepMs?: number;
}

/** A running server, as `serve` leaves it. */
export interface Served {
  url: string;
  /** The graceful stop that SIGTERM and SIGINT also run. */
  stop(): Promise<void>;
}

/**
 * Start: read config, check everything that can be checked before the
 * database is opened (each failure an `OperatorError` naming the variable to
 * fix), open and migrate the database, serve, and close gracefully on
 * SIGTERM/SIGINT.
 */
export async function serve({ env = process.env, tools, throwawayKeepMs }: ServeOptions = {}): Promise<Served> {
  const config = loadConfig(env);
  const logger = createLogger(config.server.logLevel, { secrets: config.secrets });
  checkProviderKey(config);
  const prices = pricesOf(config.models);
  makeDirectory(config.tools.workspaceDir, "WORKSPACE_DIR");
  // Before the database: a start that cannot confine run_command is refused at once.
  const sandbox = toolSandboxOf(config, { warn: (message) => logger.warn(message) });
  await checkListenAddress(config.server);
  const database = await openDatabase({
    databaseUrl: config.database.url,
    directUrl: config.database.directUrl,
    dataDir: config.database.dataDir,
    program: "the loopd server",
    ...config.database.pool,
    // A faulted embedded database fails every query from now on; staying up
    // would answer 503 forever. Exit, and let the supervisor start us afresh.
    onFault: (err) => {
      logger.fatal({ err: describeError(err) }, "the embedded database faulted and cannot recover; exiting");
      logger.flush();
      // A moment for the line to pass through pino-pretty's stream, when there is one.
      setTimeout(() => process.exit(1), 100);
    },
  });
  let loopd: Awaited<ReturnType<typeof buildApp>> | undefined;
  let url: string;
  try {
    await database.migrate().catch((err: unknown) => {
      throw new OperatorError(explainDatabaseError(err, config.database), { cause: err });
    });
    loopd = await buildApp({ config, database, logger, prices, sandbox, ...(tools && { tools }), throwawayKeepMs });
    url = await loopd.app.listen({ host: config.server.host, port: config.server.port }).catch((err: unknown) => {
      throw explainListenError(err, config.server);
    });
  } catch (err) {
    await loopd?.close().catch(() => {});
    await database.close().catch(() => {});
    throw err;
  }
  database.advertise(url);
  // Said once it serves, not before: a start that fails says only why.
  const keyless = PROVIDER_NAMES.filter(
    (p) => p !== config.models.defaultProvider && !canCall(p, config.models.providers[p]),
  );
  if (keyless.length > 0) {
    logger.info(
      `conversations that choose ${keyless.join(" or ")} will fail until ${keyless.map((p) => PROVIDERS[p].keyVariable).join(" or ")} is set`,
    );
  }
  logger.info(
    {
      url,
      database: database.kind === "pglite" ? `embedded (${config.database.dataDir})` : "postgres",
      provider: config.models.defaultProvider,
      workspace: config.tools.workspaceDir,
    },
    "loopd is ready",
  );

  const collector = config.server.idleGcMb > 0 ? startIdleCollector(config.server.idleGcMb, logger) : null;

  let stopping: Promise<void> | null = null;
  const stop = (signal: string) =>
    (stopping ??= (async () => {
      logger.info({ signal }, "shutting down");
      collector?.stop();
      const force = setTimeout(() => process.exit(1), config.server.shutdownTimeoutMs + 5_000);
      force.unref();
      await loopd.close();
      await database.close();
      clearTimeout(force);
      logger.info("stopped");
    })());
  const onSignal = (signal: NodeJS.Signals) => void stop(signal).then(() => process.exit(0));
  process.once("SIGTERM", onSignal);
  process.once("SIGINT", onSignal);
  return {
    url,
    stop: () => {
      process.off("SIGTERM", onSignal);
      process.off("SIGINT", onSignal);
      return stop("stop()");
    },
  };
}

/** The idle collection (`IDLE_GC_MB`); when V8's collection cannot be had, loopd runs without it and says so. */
function startIdleCollector(growthMb: number, logger: ReturnType<typeof createLogger>): { stop(): void } | null {
  try {
    return collectGarbageWhenIdle({
      growthMb,
      onCollected: ({ usedBefore, usedAfter, ms }) =>
        logger.debug(
          { oldSpaceUsedMbBefore: mb(usedBefore), oldSpaceUsedMbAfter: mb(usedAfter), ms: Math.round(ms) },
          "collected garbage while idle",
        ),
    });
  } catch (err) {
    logger.warn(
      { err: describeError(err) },
      "idle collection (IDLE_GC_MB) is off: this process cannot collect on demand, so memory is left to V8",
    );
    return null;
  }
}

/** MB with one decimal: a collection that frees a few hundred KB still shows it. */
const mb = (bytes: number) => Math.round(bytes / 104_857.6) / 10;

/** The default provider must be usable: say so now, not on every run. */
function checkProviderKey(config: Config): void {
  const provider = config.models.defaultProvider;
  // None (keys on, no model key, no MOCK_PROVIDER): each conversation must name one, and is told so.
  if (provider === null || canCall(provider, config.models.providers[provider])) return;
  const { keyVariable, baseUrlVariable, keyless } = PROVIDERS[provider];
  const hint = keyless
    ? ` (or ${baseUrlVariable}, for an OpenAI-compatible local server such as Ollama, vLLM or llama.cpp, which needs no key)`
    : "";
  throw new OperatorError(
    `LLM_PROVIDER is ${provider} but ${keyVariable} is not set${hint}; set it, or unset LLM_PROVIDER to use the offline mock provider`,
  );
}
