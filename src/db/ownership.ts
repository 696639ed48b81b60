/**
 * Access rules (CONTRACT "Access"): content belongs to an account; another
 * account's object is a 403, an id that does not exist a 404, and nothing of
 * another account's object is ever returned.
 */
import { getTableName, type Table } from "drizzle-orm";
import { ApiError, forbidden, notFound } from "../core/problem";

/** Returns `row` if the caller's account owns it; otherwise throws 404 or 403. */
export function ownedOr404<Row extends { account_id: number | null }>(
  row: Row | undefined,
  accountId: number,
  what: string,
): Row {
  if (!row) throw notFound(what);
  if (row.account_id !== accountId) throw forbidden(what);
  return row;
}

/**
 * Explains why a write scoped to `(id, account_id)` touched no row: throws
 * 404 when the id does not exist, 403 when another account owns it, and
 * `ifOwned` when the caller owns it after all (by default 404: the row
 * appeared between the write and this read; a conditional write passes 412).
 */
export async function throwMissingOrForbidden(
  d1: D1Database,
  table: Table,
  id: number,
  accountId: number,
  what: string,
  ifOwned: ApiError = notFound(what),
): Promise<never> {
  const row = await d1
    .prepare(`SELECT account_id FROM "${getTableName(table)}" WHERE id = ?`)
    .bind(id)
    .first<{ account_id: number | null }>();
  ownedOr404(row ?? undefined, accountId, what);
  throw ifOwned;
}

/**
 * Where another account's object must look absent (a publishable key, an OGC
 * collection): the read's 403 becomes a 404, so no foreign id is confirmed.
 */
export async function foreignAsMissing<T>(read: Promise<T>, what: string): Promise<T> {
  try {
    return await read;
  } catch (error) {
    if (error instanceof ApiError && error.code === "forbidden") throw notFound(what);
    throw error;
  }
}
