import pg from "pg";
import type { Database } from "./db.js";
import type { NotifyChannel } from "./store.js";

/**
 * Hears the nudges other loopd processes send through the database
 * (`store.notify`, Postgres NOTIFY), on a LISTEN connection of its own. On
 * the embedded database there is only one process, so it hears only what
 * the database itself sends (a trigger's NOTIFY, see `listenEmbedded`).
 * A lost nudge costs latency, not correctness: while the connection is down
 * (`listening` false), whoever relies on it polls.
 */
export interface Broadcast {
  on(channel: NotifyChannel, listener: (id: string) => void): void;
  /** True while nudges from other processes are known to arrive. */
  readonly listening: boolean;
  close(): Promise<void>;
}

export function createBroadcast({
  database,
  onError = () => {},
  reconnectMs = 1_000,
}: {
  database: Pick<Database, "kind" | "connectionString"> & Partial<Pick<Database, "listenEmbedded">>;
  onError?: (err: unknown) => void;
  /** @default 1000 */
  reconnectMs?: number;
}): Broadcast {
  const { connectionString } = database;
  if (!connectionString) {
    const { listenEmbedded } = database;
    const stops: Promise<(() => Promise<void>) | undefined>[] = [];
    return {
      on: (channel, listener) =>
        void stops.push(
          listenEmbedded?.(channel, listener).catch((err: unknown) => void onError(err)) ?? Promise.resolve(undefined),
        ),
      // No other process can send anything.
      listening: false,
      close: async () => {
        for (const stop of await Promise.all(stops.splice(0))) await stop?.().catch(() => {});
      },
    };
  }
  const listeners = new Map<string, ((id: string) => void)[]>();
  let client: pg.Client | null = null;
  let listening = false;
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
      listening = client === c;
    } catch (err) {
      onError(err);
      drop(c);
    }
  }
  function drop(c: pg.Client) {
    if (client !== c) return;
    client = null;
    listening = false;
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
    get listening() {
      return listening;
    },
    on(channel, listener) {
      const known = listeners.has(channel);
      listeners.set(channel, [...(listeners.get(channel) ?? []), listener]);
      if (!client) void connect();
      else if (!known) void client.query(`listen ${channel}`).catch(onError);
    },
    async close() {
      closed = true;
      listening = false;
      if (retry) clearTimeout(retry);
      const c = client;
      client = null;
      await c?.end().catch(() => {});
    },
  };
}
