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
  /**
   * Set when nothing from other processes will ever arrive on a server
   * (LISTEN is not delivered through a transaction-mode pooler and there is
   * no `DATABASE_DIRECT_URL`): whoever waits for a nudge polls at most this
   * far apart (`POLL_INTERVAL_MS`). Null otherwise.
   */
  readonly fallbackPollMs: number | null;
  close(): Promise<void>;
}

export function createBroadcast({
  database,
  onError = () => {},
  reconnectMs = 1_000,
  pollIntervalMs = 500,
}: {
  database: Pick<Database, "kind" | "listenUrl"> & Partial<Pick<Database, "listenEmbedded">>;
  onError?: (err: unknown) => void;
  /** @default 1000 */
  reconnectMs?: number;
  /** `POLL_INTERVAL_MS`. @default 500 */
  pollIntervalMs?: number;
}): Broadcast {
  const { listenUrl } = database;
  if (database.kind === "postgres" && !listenUrl) {
    return { on: () => {}, listening: false, fallbackPollMs: pollIntervalMs, close: async () => {} };
  }
  if (!listenUrl) {
    const { listenEmbedded } = database;
    const stops: Promise<(() => Promise<void>) | undefined>[] = [];
    return {
      on: (channel, listener) =>
        void stops.push(
          listenEmbedded?.(channel, listener).catch((err: unknown) => void onError(err)) ?? Promise.resolve(undefined),
        ),
      // No other process can send anything.
      listening: false,
      fallbackPollMs: null,
      close: async () => {
        for (const stop of await Promise.all(stops.splice(0))) await stop?.().catch(() => {});
      },
    };
  }
  const url = listenUrl;
  const listeners = new Map<string, ((id: string) => void)[]>();
  let client: pg.Client | null = null;
  let listening = false;
  let closed = false;
  let retry: NodeJS.Timeout | null = null;
  /** The connection's last statement: each LISTEN waits for the one before (pg does not take overlapping queries). */
  let last: Promise<unknown> = Promise.resolve();

  async function connect(): Promise<void> {
    if (closed || client) return;
    const c = new pg.Client({ connectionString: url });
    c.on("notification", ({ channel, payload }) => {
      for (const listener of listeners.get(channel) ?? []) listener(payload ?? "");
    });
    c.on("error", (err) => {
      onError(err);
      drop(c);
    });
    c.on("end", () => drop(c));
    client = c;
    // Channels added while this runs are in the loop too (a Map's iteration sees what is added during it).
    const started = (async () => {
      await c.connect();
      for (const channel of listeners.keys()) await c.query(`listen ${channel}`);
    })();
    last = started.catch(() => {});
    try {
      await started;
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
    fallbackPollMs: null,
    on(channel, listener) {
      const known = listeners.has(channel);
      listeners.set(channel, [...(listeners.get(channel) ?? []), listener]);
      if (!client) void connect();
      else if (!known) {
        const c = client;
        last = last.then(() => (client === c ? c.query(`listen ${channel}`) : undefined)).catch(onError);
      }
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
