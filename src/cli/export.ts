import { runCli } from "./run-cli.js";
import { loadConfig } from "../config.js";
import { OperatorError } from "../errors.js";
import { writeOutputFile } from "./write-output-file.js";
import { openDatabase } from "../store/db.js";

/**
 * `npm run db:export [-- <file.sql>]`: the embedded database in DATA_DIR as
 * SQL (pg_dump's plain format), to move to a Postgres server with
 * `psql "$DATABASE_URL" -f <file.sql>` and then run loopd with DATABASE_URL.
 * Written to `reports/loopd-<date>.sql` unless a file is named. Like every
 * program that opens DATA_DIR, it needs the server stopped.
 */
await runCli("db:export cannot run:", async () => {
  const [out, ...more] = process.argv.slice(2);
  if (more.length > 0) throw new OperatorError("usage: npm run db:export [-- <file.sql>]");
  const config = loadConfig();
  if (config.database.url)
    throw new OperatorError(
      "DATABASE_URL is set: this exports the embedded database in DATA_DIR; a Postgres server has pg_dump of its own",
    );
  // As it is: an export writes nothing to the folder it reads (a Postgres server migrates what it loads when loopd starts on it).
  const database = await openDatabase({
    dataDir: config.database.dataDir,
    program: "npm run db:export",
    mustExist: true,
  });
  try {
    const written = writeOutputFile({
      name: `loopd-${new Date().toISOString().slice(0, 10)}`,
      extension: "sql",
      out,
      text: await database.dumpSql!(),
    });
    console.log(
      `the embedded database in ${config.database.dataDir} is in ${written.file}${written.replaced ? " (replaced the earlier file)" : ""}`,
    );
    console.log(`load it into an empty Postgres database with: psql "$DATABASE_URL" -f ${written.file}`);
  } finally {
    await database.close();
  }
});
