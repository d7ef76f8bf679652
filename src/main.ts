import { buildApp, createLogger } from "./app.js";
import { ConfigError, loadConfig } from "./config.js";
import { describeError } from "./errors.js";
import { openDatabase } from "./store/db.js";

/** Start: read config, open and migrate the database, serve, and close gracefully on SIGTERM/SIGINT. */
async function main() {
  const config = loadConfig();
  const logger = createLogger(config.logLevel);
  const database = await openDatabase({
    databaseUrl: config.databaseUrl,
    dataDir: config.dataDir,
    // A faulted embedded database fails every query from now on; staying up
    // would answer 503 forever. Exit, and let the supervisor start us afresh.
    onFault: (err) => {
      logger.fatal({ err: describeError(err) }, "the embedded database faulted and cannot recover; exiting");
      logger.flush();
      // A moment for the line to pass through pino-pretty's stream, when there is one.
      setTimeout(() => process.exit(1), 100);
    },
  });
  await database.migrate();
  const loopd = await buildApp({ config, database, logger });
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

main().catch((err: unknown) => {
  if (err instanceof ConfigError) {
    console.error(err.message);
  } else {
    console.error("loopd failed to start:", err instanceof Error ? err.message : err);
  }
  process.exit(1);
});
