import { getTableColumns, type Table } from "drizzle-orm";

/**
 * A row of `table` as `to_jsonb` gives it (snake_case keys, times as text),
 * read as drizzle reads the table's columns; a key missing from `json` is null.
 */
export function rowFromJson<T extends Table>(table: T, json: Record<string, unknown>): T["$inferSelect"] {
  const row: Record<string, unknown> = {};
  for (const [key, column] of Object.entries(getTableColumns(table))) {
    const value = json[column.name];
    row[key] = value === null || value === undefined ? null : column.mapFromDriverValue(value);
  }
  return row as T["$inferSelect"];
}
