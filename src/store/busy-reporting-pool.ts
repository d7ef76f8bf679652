import pg from "pg";

/**
 * Every connection of the pool stayed in use for `DB_CONNECT_TIMEOUT_MS`:
 * the database is up, loopd is busy. (pg says "timeout exceeded when trying
 * to connect" for this and for a server that does not answer alike.)
 */
export class DatabaseBusyError extends Error {
  override readonly name = "DatabaseBusyError";
}

/** pg's Pool, whose connect timeout says which it was: all connections busy, or a new one that did not come up. */
export class BusyReportingPool extends pg.Pool {
  /** Connections handed out so far, and the time their askers waited for them in all (ms): /metrics, the bench. */
  acquired = 0;
  waitedMs = 0;
  /** When each asker still waiting asked, in the order they asked. */
  private readonly asking = new Map<number, number>();
  private asks = 0;

  /** How long the asker waiting longest has waited for a connection so far (ms); 0 when none waits. */
  longestWaitMs(): number {
    for (const asked of this.asking.values()) return performance.now() - asked;
    return 0;
  }

  /** Counts an asker as waiting until it is answered (a connection, counted with its wait, or an error). */
  private ask(): (got: boolean) => void {
    const id = ++this.asks;
    const asked = performance.now();
    this.asking.set(id, asked);
    return (got) => {
      this.asking.delete(id);
      if (!got) return;
      this.acquired++;
      this.waitedMs += performance.now() - asked;
    };
  }

  private explain(err: Error): Error {
    const max = (this.options as { max?: number }).max ?? 10;
    if (!/timeout exceeded when trying to connect/i.test(err.message) || this.totalCount < max) return err;
    return new DatabaseBusyError(
      `all ${max} connections of the pool stayed in use for ${(this.options as { connectionTimeoutMillis?: number }).connectionTimeoutMillis} ms`,
      { cause: err },
    );
  }

  // pg calls it with a callback (pool.query); drizzle's transactions await it.
  override connect(
    callback?: (err: Error | undefined, client: pg.PoolClient | undefined, done: (release?: unknown) => void) => void,
  ): never {
    const connect = super.connect.bind(this) as (cb?: unknown) => unknown;
    const answered = this.ask();
    if (callback) {
      return connect((err: Error | undefined, client: pg.PoolClient | undefined, done: (release?: unknown) => void) => {
        answered(!err);
        callback(err && this.explain(err), client, done);
      }) as never;
    }
    return (connect() as Promise<pg.PoolClient>).then(
      (client) => {
        answered(true);
        return client;
      },
      (err: Error) => {
        answered(false);
        throw this.explain(err);
      },
    ) as never;
  }
}

/** Whether the database answers `query`: busy when every pooled connection stayed in use. */
export async function healthOf(query: () => Promise<unknown>): Promise<"ok" | "busy" | "unreachable"> {
  try {
    await query();
    return "ok";
  } catch (err) {
    return err instanceof DatabaseBusyError ? "busy" : "unreachable";
  }
}
