import { sql } from "drizzle-orm";
import pg from "pg";
import type { Database, Db } from "./db.js";

export type BroadcastChannel = "loopd_run_events" | "loopd_run_cancel";

/**
 * A nudge to every loopd process on the same database, carrying only an id
 * (never an event's payload): Postgres NOTIFY, sent when the transaction
 * commits, and LISTEN on a connection of its own. On the embedded database
 * there is only one process, so it does nothing; everyone who relies on it
 * also polls, so a lost nudge costs latency, not correctness.
 */
export interface Broadcast {
  /** Sent when `tx` commits (at once when `tx` is not a transaction). */
  send(tx: Db, channel: BroadcastChannel, id: string): Promise<void>;
  on(channel: BroadcastChannel, listener: (id: string) => void): void;
  close(): Promise<void>;
}

export function createBroadcast({
  database,
  onError = () => {},
  reconnectMs = 1_000,
}: {
  database: Pick<Database, "kind" | "connectionString">;
  onError?: (err: unknown) => void;
  /** @default 1000 */
  reconnectMs?: number;
}): Broadcast {
  const { connectionString } = database;
  if (!connectionString) {
    return { send: async () => {}, on: () => {}, close: async () => {} };
  }
  const listeners = new Map<string, ((id: string) => void)[]>();
  let client: pg.Client | null = null;
  let closed = false;
  let retry: NodeJS.Timeout | null = null;

  async function connect(): Promise<void> {
    if (closed || client) return;
    const c = new pg.Client({ connectionString: connectionString! });
    c.on("notification", ({ channel, payload }) => {
      for (const listener of listeners.get(channel) ?? []) listener(payload ?? "");
    });
    c.on("error", (err) => {
      onError(err);
      drop(c);
    });
    c.on("end", () => drop(c));
    client = c;
    try {
      await c.connect();
      for (const channel of listeners.keys()) await c.query(`listen ${channel}`);
    } catch (err) {
      onError(err);
      drop(c);
    }
  }
  function drop(c: pg.Client) {
    if (client !== c) return;
    client = null;
    void c.end().catch(() => {});
    if (!closed && !retry) {
      retry = setTimeout(() => {
        retry = null;
        void connect();
      }, reconnectMs);
      retry.unref();
    }
  }

  return {
    async send(tx, channel, id) {
      await tx.execute(sql`select pg_notify(${channel}, ${id})`);
    },
    on(channel, listener) {
      const known = listeners.has(channel);
      listeners.set(channel, [...(listeners.get(channel) ?? []), listener]);
      if (!client) void connect();
      else if (!known) void client.query(`listen ${channel}`).catch(onError);
    },
    async close() {
      closed = true;
      if (retry) clearTimeout(retry);
      const c = client;
      client = null;
      await c?.end().catch(() => {});
    },
  };
}
