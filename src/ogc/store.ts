/** What the OGC collections read beyond the resources' own stores: the caller's lists and their members. */
import { and, eq, sql } from "drizzle-orm";
import { database } from "../db/client";
import { listPinpoints, lists, pinpoints, type Pinpoint } from "../db/schema";

/** Each list is a collection; more than this many are left out of `/collections` (and said so). */
export const MAX_LIST_COLLECTIONS = 1000;

export type ListSummary = { id: number; name: string; description: string | null };

/** The account's lists: all of them, or only those of `only` (a publishable key's). */
export async function accountLists(
  d1: D1Database,
  accountId: number,
  only: readonly number[] | null,
): Promise<ListSummary[]> {
  return database(d1)
    .select({ id: lists.id, name: lists.name, description: lists.description })
    .from(lists)
    .where(
      and(
        eq(lists.account_id, accountId),
        only === null ? undefined : sql`${lists.id} IN (SELECT value FROM json_each(${JSON.stringify(only)}))`,
      ),
    )
    .orderBy(lists.id)
    .limit(MAX_LIST_COLLECTIONS);
}

/** The caller's list, or undefined: another account's list is no collection of the caller's. */
export async function accountList(d1: D1Database, accountId: number, listId: number): Promise<ListSummary | undefined> {
  return database(d1)
    .select({ id: lists.id, name: lists.name, description: lists.description })
    .from(lists)
    .where(and(eq(lists.id, listId), eq(lists.account_id, accountId)))
    .get();
}

/** A pinpoint of the caller's list `listId`, or undefined if it is not in it. */
export async function listMember(
  d1: D1Database,
  accountId: number,
  listId: number,
  pinpointId: number,
): Promise<Pinpoint | undefined> {
  const row = await database(d1)
    .select({ pinpoint: pinpoints })
    .from(listPinpoints)
    .innerJoin(pinpoints, eq(pinpoints.id, listPinpoints.pinpoint_id))
    .innerJoin(lists, eq(lists.id, listPinpoints.list_id))
    .where(
      and(
        eq(listPinpoints.list_id, listId),
        eq(listPinpoints.pinpoint_id, pinpointId),
        eq(lists.account_id, accountId),
        eq(pinpoints.account_id, accountId),
      ),
    )
    .get();
  return row?.pinpoint;
}
