/**
 * What a publishable key publishes (src/auth/publishable-keys.ts): the lists
 * it names, or every list of its account (`null`), and the pinpoints in them,
 * and the events at those pinpoints. Nothing else of the account is visible
 * to it; an object it cannot see is a 404, so a key learns no id outside what
 * it publishes. The conditions are SQL for the searches and single reads.
 */
import { sql, type SQL } from "drizzle-orm";
import type { KeyPrincipal } from "../core/env";
import { notFound } from "../core/problem";
import { rawRows } from "./search/raw-rows";

/** The lists a key reads: their ids, or `null` for every list of the account. */
export type PublishedLists = readonly number[] | null;

/** Whether the list `listId` of the key's account is published by the key. */
export const publishesList = (lists: PublishedLists, listId: number) => lists === null || lists.includes(listId);

/**
 * The condition that the pinpoint whose id is `pinpointId` is in a list the key
 * publishes. Membership only joins a list and a pinpoint of one account, so a
 * pinpoint of the key's account in any list is in one of that account's lists.
 */
export function publishedPinpointSql(lists: PublishedLists, pinpointId: SQL): SQL {
  return lists === null
    ? sql`EXISTS (SELECT 1 FROM list_pinpoints WHERE list_pinpoints.pinpoint_id = ${pinpointId})`
    : sql`EXISTS (SELECT 1 FROM list_pinpoints WHERE list_pinpoints.pinpoint_id = ${pinpointId} AND list_pinpoints.list_id IN (SELECT value FROM json_each(${JSON.stringify(lists)})))`;
}

/** Whether the pinpoint `pinpointId` is published by a key reading `lists`. */
export async function isPublishedPinpoint(d1: D1Database, lists: PublishedLists, pinpointId: number): Promise<boolean> {
  const [row] = await rawRows(d1, sql`SELECT ${publishedPinpointSql(lists, sql`${pinpointId}`)} AS published`);
  return row?.published === 1;
}

/** 404 unless a key reading `lists` publishes the pinpoint `pinpointId` (of its account: checked by the caller). */
export async function assertPublishedPinpoint(
  d1: D1Database,
  lists: PublishedLists,
  pinpointId: number,
): Promise<void> {
  if (!(await isPublishedPinpoint(d1, lists, pinpointId))) throw notFound("pinpoint");
}

/** 404 unless the list `listId` is the key's account's and the key publishes it. */
export async function assertListPublished(
  d1: D1Database,
  key: Pick<KeyPrincipal, "accountId" | "lists">,
  listId: number,
): Promise<void> {
  const owner =
    publishesList(key.lists, listId) &&
    (await d1.prepare("SELECT account_id FROM lists WHERE id = ?").bind(listId).first<{ account_id: number }>());
  if (!owner || owner.account_id !== key.accountId) throw notFound("list");
}
