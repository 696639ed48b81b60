/**
 * Access rules (CONTRACT "Access"): content belongs to an account; another
 * account's object is a 403, an id that does not exist a 404, and nothing of
 * another account's object is ever returned.
 */
import { getTableName, sql, type Table } from "drizzle-orm";
import { ApiError, forbidden, notFound } from "../core/problem";
import { ownersElsewhere } from "./client";
import { beyondReach, type TableReach } from "./reach";
import { rawRows } from "./search/raw-rows";

/**
 * A 404 for an id the request's own database does not hold, which may still
 * be another account's on another shard (docs/scaling.md): the app's error
 * handler asks `explainMissing` before it answers, so the answer is the 403
 * or 404 a single database gives.
 */
export class MissingHere extends ApiError {
  constructor(
    readonly what: string,
    readonly table: string,
    readonly id: number,
    readonly answer: ApiError = notFound(what),
  ) {
    super(answer.code, answer.detail, answer.options);
  }
}

/** The answer for a `MissingHere`: 403 if another account holds the id on another shard, else its own answer. */
export async function explainMissing(error: MissingHere): Promise<ApiError> {
  const owners = await ownersElsewhere(error.table, [error.id]);
  return owners.has(error.id) ? forbidden(error.what) : error.answer;
}

/** The ids of `table` among `ids` that other accounts hold on other shards (see `MissingHere`). */
export async function foreignElsewhere(table: Table, ids: readonly number[]): Promise<Set<number>> {
  return new Set((await ownersElsewhere(getTableName(table), ids)).keys());
}

/**
 * Returns `row` if the caller's account owns it; otherwise throws 404 or 403.
 * `probe` names the row looked for, so a missing one can still be found another account's.
 */
export function ownedOr404<Row extends { account_id: number | null }>(
  row: Row | undefined,
  accountId: number,
  what: string,
  probe?: { table: Table; id: number },
): Row {
  if (!row) throw probe ? new MissingHere(what, getTableName(probe.table), probe.id) : notFound(what);
  if (row.account_id !== accountId) throw forbidden(what);
  return row;
}

/**
 * Explains why a write scoped to `(id, account_id)` (and to the caller's reach, `within`) touched no
 * row: throws 404 when the id does not exist, 403 when another account owns it, the answer for a row
 * beyond the caller's reach (src/db/reach.ts), and `ifOwned` when the caller may change it after all
 * (by default 404: the row disappeared between the write and this read; a conditional write passes 412).
 */
export async function throwMissingOrForbidden(
  d1: D1Database,
  table: Table,
  id: number,
  accountId: number,
  what: string,
  ifOwned: ApiError = notFound(what),
  within?: TableReach,
): Promise<never> {
  const [row] = await rawRows(
    d1,
    sql`SELECT account_id, ${within?.acts ?? sql`1`} AS acts, ${within?.sees ?? sql`1`} AS sees FROM ${table} WHERE id = ${id}`,
  );
  ownedOr404(row as { account_id: number | null } | undefined, accountId, what, { table, id });
  if (within && !row!.acts) throw beyondReach(within.reach, what, Boolean(row!.sees));
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
    // Not worth asking the other shards whose it is: it is absent either way.
    if (error instanceof MissingHere) throw error.answer;
    throw error;
  }
}
