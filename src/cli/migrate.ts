import { runCli } from "./run-cli.js";
import { loadConfig } from "../config.js";
import { OperatorError } from "../errors.js";
import { openDatabase } from "../store/db.js";
import { explainDatabaseError } from "../store/explain-database-error.js";

/** `npm run db:migrate`: applies the committed migrations to DATABASE_URL, or to the embedded database in DATA_DIR. */
await runCli("db:migrate cannot run:", async () => {
  const config = loadConfig();
  const database = await openDatabase({
    databaseUrl: config.database.url,
    directUrl: config.database.directUrl,
    dataDir: config.database.dataDir,
    program: "npm run db:migrate",
    ...config.database.pool,
  });
  try {
    await database.migrate().catch((err: unknown) => {
      throw new OperatorError(explainDatabaseError(err, config.database), { cause: err });
    });
    console.log(
      `migrations applied (${database.kind === "pglite" ? `embedded database in ${config.database.dataDir}` : "postgres"})`,
    );
  } finally {
    await database.close();
  }
});
