/**
 * Lists in D1: create, get, update (partial), delete and page, every one
 * scoped to the caller's account and reach (src/db/reach.ts). Deleting a list deletes its memberships
 * (foreign key cascade), not its pinpoints; membership batches are in
 * membership.ts.
 */
import { and, eq, sql } from "drizzle-orm";
import { database } from "../db/client";
import { keyset, type Bound } from "../db/keyset";
import { ownedRows } from "../db/owned";
import { lists, type List } from "../db/schema";

/** A list is "in" the lists given when it is one of them. */
export const listRows = ownedRows(lists, { what: "list", inLists: (set) => sql`lists.id IN ${set}` });

/** One keyset page of the account's lists among `ids` (a publishable key's, a list collaborator's). */
export async function pageListsAmong(
  d1: D1Database,
  accountId: number,
  ids: readonly number[],
  bound: Bound,
  take: number,
): Promise<List[]> {
  const { where, orderBy } = keyset([lists.id], bound);
  return database(d1)
    .select()
    .from(lists)
    .where(
      and(
        eq(lists.account_id, accountId),
        sql`${lists.id} IN (SELECT value FROM json_each(${JSON.stringify(ids)}))`,
        where,
      ),
    )
    .orderBy(...orderBy)
    .limit(take);
}
