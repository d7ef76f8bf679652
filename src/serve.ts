import { mkdirSync } from "node:fs";
import { buildApp, createLogger } from "./app.js";
import { loadConfig, type Config } from "./config.js";
import { describeError } from "./errors.js";
import { openDatabase } from "./store/db.js";
import { explainDatabaseError } from "./store/explain-database-error.js";
import type { Tool } from "./tools/define-tool.js";

/** A start-up failure whose message tells the operator what to fix. */
export class StartupError extends Error {
  override readonly name = "StartupError";
}

export interface ServeOptions {
  /** @default process.env */
  env?: NodeJS.ProcessEnv;
  /** @default the built-in tools */
  tools?: Tool[];
}

/**
 * Start: read config, check what the operator must fix before anything
 * runs, open and migrate the database, serve, and close gracefully on
 * SIGTERM/SIGINT.
 */
export async function serve({ env = process.env, tools }: ServeOptions = {}): Promise<void> {
  const config = loadConfig(env);
  const logger = createLogger(config.logLevel, { secrets: config.secrets });
  checkProviderKey(config, env);
  for (const missing of providersWithoutKey(env).filter((p) => p !== config.defaultProvider)) {
    logger.warn({ provider: missing }, `no ${KEY_OF[missing]} is set: conversations that choose ${missing} will fail until it is`);
  }
  mkdirSync(config.workspaceDir, { recursive: true });

  const database = await openDatabase({
    databaseUrl: config.databaseUrl,
    dataDir: config.dataDir,
    ...config.databasePool,
    // A faulted embedded database fails every query from now on; staying up
    // would answer 503 forever. Exit, and let the supervisor start us afresh.
    onFault: (err) => {
      logger.fatal({ err: describeError(err) }, "the embedded database faulted and cannot recover; exiting");
      logger.flush();
      // A moment for the line to pass through pino-pretty's stream, when there is one.
      setTimeout(() => process.exit(1), 100);
    },
  });
  try {
    await database.migrate();
  } catch (err) {
    await database.close().catch(() => {});
    throw new StartupError(explainDatabaseError(err, config.databaseUrl));
  }
  const loopd = await buildApp({ config, database, logger, ...(tools && { tools }) });
  await loopd.app.listen({ host: config.host, port: config.port });
  logger.info(
    { database: database.kind === "pglite" ? `embedded (${config.dataDir})` : "postgres", provider: config.defaultProvider, workspace: config.workspaceDir },
    "loopd is ready",
  );

  const stop = async (signal: string) => {
    logger.info({ signal }, "shutting down");
    const force = setTimeout(() => process.exit(1), config.shutdownTimeoutMs + 5_000);
    force.unref();
    await loopd.close();
    await database.close();
    logger.info("stopped");
    process.exit(0);
  };
  process.once("SIGTERM", () => void stop("SIGTERM"));
  process.once("SIGINT", () => void stop("SIGINT"));
}

const KEY_OF = { anthropic: "ANTHROPIC_API_KEY", openai: "OPENAI_API_KEY" } as const;

function providersWithoutKey(env: NodeJS.ProcessEnv): (keyof typeof KEY_OF)[] {
  return (Object.keys(KEY_OF) as (keyof typeof KEY_OF)[]).filter((p) => !env[KEY_OF[p]]?.trim());
}

/** The default provider must be usable: say so now, not on every run. */
function checkProviderKey(config: Config, env: NodeJS.ProcessEnv): void {
  const provider = config.defaultProvider;
  if (provider === "mock" || !providersWithoutKey(env).includes(provider)) return;
  const hint =
    provider === "openai"
      ? " (an OpenAI-compatible local server such as vLLM, Ollama or llama.cpp takes any non-empty key, e.g. OPENAI_API_KEY=local, with OPENAI_BASE_URL pointing at it)"
      : "";
  throw new StartupError(`LLM_PROVIDER is ${provider} but ${KEY_OF[provider]} is not set${hint}; set it, or unset LLM_PROVIDER to use the offline mock provider`);
}
