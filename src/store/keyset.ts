import { and, eq, lt, or, type Column, type SQL } from "drizzle-orm";

/** A position in a newest-first listing: the last row a page showed. */
export interface Keyset {
  createdAt: Date;
  id: string;
}

/** Rows after `cursor` in (created_at desc, id desc) order; every row when there is none. */
export function olderThan(createdAt: Column, id: Column, cursor: Keyset | undefined): SQL | undefined {
  return cursor
    ? or(lt(createdAt, cursor.createdAt), and(eq(createdAt, cursor.createdAt), lt(id, cursor.id)))
    : undefined;
}

/** A page from a query that fetched `limit + 1` rows to learn whether more follow. */
export function pageOf<T>(rows: T[], limit: number): { rows: T[]; hasMore: boolean } {
  return { rows: rows.slice(0, limit), hasMore: rows.length > limit };
}
