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
  private explain(err: Error): Error {
    const max = (this.options as { max?: number }).max ?? 10;
    if (!/timeout exceeded when trying to connect/i.test(err.message) || this.totalCount < max) return err;
    return new DatabaseBusyError(`all ${max} connections of the pool stayed in use for ${(this.options as { connectionTimeoutMillis?: number }).connectionTimeoutMillis} ms`, { cause: err });
  }

  // pg calls it with a callback (pool.query); drizzle's transactions await it.
  override connect(callback?: (err: Error | undefined, client: pg.PoolClient | undefined, done: (release?: unknown) => void) => void): never {
    const connect = super.connect.bind(this) as (cb?: unknown) => unknown;
    if (callback) return connect((err: Error | undefined, client: pg.PoolClient | undefined, done: (release?: unknown) => void) => callback(err && this.explain(err), client, done)) as never;
    return (connect() as Promise<pg.PoolClient>).catch((err: Error) => {
      throw this.explain(err);
    }) as never;
  }
}
