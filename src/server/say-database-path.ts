import type { Logger } from "pino";
import type { Broadcast } from "../store/broadcast.js";
import type { Database } from "../store/db.js";

/** Says once, at start, what loopd found behind `DATABASE_URL` when it is not a plain direct connection. */
export function sayDatabasePath(
  database: Pick<Database, "serverPath">,
  broadcast: Pick<Broadcast, "fallbackPollMs">,
  log: Pick<Logger, "warn">,
): void {
  const path = database.serverPath;
  if (!path) return;
  if (broadcast.fallbackPollMs !== null) {
    log.warn(
      { poll_interval_ms: broadcast.fallbackPollMs },
      `LISTEN is not delivered through DATABASE_URL (a transaction-mode pooler?) and DATABASE_DIRECT_URL is not set: loopd polls every ${broadcast.fallbackPollMs} ms (POLL_INTERVAL_MS) for what other instances do; set DATABASE_DIRECT_URL to a direct or session-mode connection to be told at once`,
    );
  }
  if (path.refusedStartupParameters) {
    log.warn(
      {},
      "DATABASE_URL refuses statement_timeout and idle_in_transaction_session_timeout as startup parameters (a pooler): loopd does not send them, and bounds each query itself; set them on the database role (ALTER ROLE … SET statement_timeout = '30s') or in the pooler",
    );
  }
}
