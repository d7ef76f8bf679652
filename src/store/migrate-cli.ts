import { loadConfig } from "../config.js";
import { openDatabase } from "./db.js";

/** `npm run db:migrate`: applies the committed migrations to DATABASE_URL, or to the embedded database in DATA_DIR. */
const config = loadConfig();
const database = await openDatabase({ databaseUrl: config.databaseUrl, dataDir: config.dataDir, ...config.databasePool });
try {
  await database.migrate();
  console.log(`migrations applied (${database.kind})`);
} finally {
  await database.close();
}
