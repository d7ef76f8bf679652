import { existsSync, writeFileSync } from "node:fs";
import path from "node:path";
import { runCli } from "../cli.js";
import { loadConfig } from "../config.js";
import { OperatorError } from "../errors.js";
import { openDatabase } from "./db.js";

/**
 * `npm run db:export -- <file.sql>`: the embedded database in DATA_DIR as
 * SQL (pg_dump's plain format), to move to a Postgres server with
 * `psql "$DATABASE_URL" -f <file.sql>` and then run loopd with DATABASE_URL.
 * Like every program that opens DATA_DIR, it needs the server stopped.
 */
await runCli("db:export cannot run:", async () => {
  const file = process.argv[2];
  if (!file || process.argv.length > 3) throw new OperatorError("usage: npm run db:export -- <file.sql>");
  const out = path.resolve(file);
  if (existsSync(out)) throw new OperatorError(`${out} exists: name a new file (an export never overwrites one)`);
  const config = loadConfig();
  if (config.databaseUrl) throw new OperatorError("DATABASE_URL is set: this exports the embedded database in DATA_DIR; a Postgres server has pg_dump of its own");
  const database = await openDatabase({ dataDir: config.dataDir, program: "npm run db:export" });
  try {
    await database.migrate();
    writeFileSync(out, await database.dumpSql!(), { flag: "wx" });
    console.log(`the embedded database in ${config.dataDir} is in ${out}; load it with: psql "$DATABASE_URL" -f ${file}`);
  } finally {
    await database.close();
  }
});
