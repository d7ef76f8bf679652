import type { PGlite } from "@electric-sql/pglite";

/**
 * Counts what drizzle sends through PGlite: its queries, in and out of
 * transactions, and each transaction's BEGIN and COMMIT; and how long the
 * oldest call not yet answered has been waiting (PGlite runs one at a time).
 */
export function countStatements(client: PGlite): { count: number; longestWaitMs(): number } {
  const pending = new Map<number, number>();
  let calls = 0;
  const watched = <T>(work: () => Promise<T>): Promise<T> => {
    const id = ++calls;
    pending.set(id, performance.now());
    return work().finally(() => pending.delete(id));
  };
  const counter = {
    count: 0,
    longestWaitMs() {
      for (const since of pending.values()) return performance.now() - since;
      return 0;
    },
  };
  const query = client.query.bind(client);
  client.query = ((...args: Parameters<PGlite["query"]>) => {
    counter.count++;
    return watched(() => query(...args));
  }) as PGlite["query"];
  const transaction = client.transaction.bind(client);
  client.transaction = (<T>(fn: (tx: Parameters<Parameters<PGlite["transaction"]>[0]>[0]) => Promise<T>) =>
    watched(() =>
      transaction((tx) => {
        counter.count += 2;
        const txQuery = tx.query.bind(tx);
        tx.query = ((...args: Parameters<typeof tx.query>) => {
          counter.count++;
          return txQuery(...args);
        }) as typeof tx.query;
        return fn(tx);
      }),
    )) as PGlite["transaction"];
  return counter;
}
