import path from "node:path";
import { z } from "zod";
import { intFromEnv, optionalString } from "../util/env-values.js";
import { DEFAULT_POOL, type DatabasePoolOptions } from "./db.js";

/**
 * A Postgres URL, or unset. Checked here because the driver takes anything:
 * `localhost:5432` reads as a user-less socket path ("refused the login for
 * user \"\"") and `mysql://…` as a Postgres server. The message never
 * shows the URL, which may hold a password.
 */
const databaseUrl = optionalString.superRefine((url, ctx) => {
  if (url === undefined) return;
  const scheme = /^([a-z][a-z0-9+.-]*):\/\//i.exec(url)?.[1]?.toLowerCase();
  if (scheme === "postgres" || scheme === "postgresql") {
    if (!URL.canParse(url)) {
      ctx.addIssue({
        code: "custom",
        message:
          "is not a valid URL: percent-encode any @ : / ? # in the user or password (encodeURIComponent), and check the port (1–65535)",
      });
    }
    return;
  }
  ctx.addIssue({
    code: "custom",
    message: scheme
      ? `is a ${scheme}:// URL, but loopd needs PostgreSQL: postgres://user:password@host:5432/database (unset it to use the embedded database in DATA_DIR)`
      : "must start with postgres:// or postgresql:// (e.g. postgres://user:password@localhost:5432/loopd); unset it to use the embedded database in DATA_DIR",
  });
});

/** The variables of the database and its pool (composed into config.ts's). */
export const databaseVariables = {
  DATABASE_URL: databaseUrl,
  DATABASE_DIRECT_URL: databaseUrl,
  DATA_DIR: z.string().min(1).default("./data"),
  DB_POOL_SIZE: intFromEnv(DEFAULT_POOL.poolSize),
  DB_CONNECT_TIMEOUT_MS: intFromEnv(DEFAULT_POOL.connectTimeoutMs),
  DB_STATEMENT_TIMEOUT_MS: intFromEnv(DEFAULT_POOL.statementTimeoutMs, { min: 0 }),
  DB_IDLE_IN_TRANSACTION_TIMEOUT_MS: intFromEnv(DEFAULT_POOL.idleInTransactionTimeoutMs, { min: 0 }),
  DB_ADMISSION_WAIT_MS: intFromEnv(1_000, { min: 0 }),
  POLL_INTERVAL_MS: intFromEnv(500, { min: 10 }),
};

type DatabaseVariables = z.output<z.ZodObject<typeof databaseVariables>>;

export function databaseSettingsOf(e: DatabaseVariables) {
  return {
    /** A Postgres server; unset: the embedded database in `dataDir`. */
    url: e.DATABASE_URL,
    /**
     * A direct (or session-mode) connection to the same database, used only
     * for migrations and LISTEN, when `url` is a transaction-mode pooler.
     */
    directUrl: e.DATABASE_URL ? e.DATABASE_DIRECT_URL : undefined,
    /** How often loopd polls for what other instances did when LISTEN is not delivered. */
    pollIntervalMs: e.POLL_INTERVAL_MS,
    dataDir: path.resolve(e.DATA_DIR),
    /** The limits of the pool when on a Postgres server. */
    pool: {
      poolSize: e.DB_POOL_SIZE,
      connectTimeoutMs: e.DB_CONNECT_TIMEOUT_MS,
      statementTimeoutMs: e.DB_STATEMENT_TIMEOUT_MS,
      idleInTransactionTimeoutMs: e.DB_IDLE_IN_TRANSACTION_TIMEOUT_MS,
    } satisfies Required<DatabasePoolOptions>,
    /**
     * A new run is refused (503 with Retry-After) while a statement has
     * waited longer than this for the database: load is shed at the door,
     * before the runs already accepted wait past DB_CONNECT_TIMEOUT_MS for
     * their saves. 0 turns it off.
     */
    admissionWaitMs: e.DB_ADMISSION_WAIT_MS,
  };
}
