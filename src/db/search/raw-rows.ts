/**
 * Rows read with hand-written SQL (the search queries join virtual tables
 * drizzle cannot name), mapped to the table's row type by the columns' own
 * decoders, exactly as drizzle maps its own selects.
 */
import { getTableColumns, type SQL } from "drizzle-orm";
import { SQLiteSyncDialect } from "drizzle-orm/sqlite-core";
import type { SQLiteTable } from "drizzle-orm/sqlite-core";

export function rowMapper<T extends SQLiteTable>(table: T): (raw: Record<string, unknown>) => T["$inferSelect"] {
  const columns = Object.entries(getTableColumns(table));
  return (raw) => {
    const row: Record<string, unknown> = {};
    for (const [key, column] of columns) {
      const value = raw[column.name];
      row[key] = value === null || value === undefined ? null : column.mapFromDriverValue(value);
    }
    return row as T["$inferSelect"];
  };
}

const dialect = new SQLiteSyncDialect();

/** The rows of one hand-written query. */
export async function rawRows(d1: D1Database, query: SQL): Promise<Record<string, unknown>[]> {
  const { sql, params } = dialect.sqlToQuery(query);
  return (
    await d1
      .prepare(sql)
      .bind(...params)
      .all<Record<string, unknown>>()
  ).results;
}
