/**
 * Publishable keys in D1: create, get, page and revoke, each scoped to the
 * caller's account. A key and the lists it reads are written in one batch
 * (one transaction), so a key never exists without its lists; a revoked key
 * is deleted, and with it every trace of what it could read.
 */
import { and, eq, sql } from "drizzle-orm";
import { fieldError } from "../core/problem";
import { KEY_PREFIX_LENGTH } from "../core/publishable-keys";
import { generatePublishableKey, hashSecret } from "../core/secrets";
import { database } from "../db/client";
import { keyset, type Bound } from "../db/keyset";
import { ownedOr404, throwMissingOrForbidden } from "../db/ownership";
import { rowMapper } from "../db/search/raw-rows";
import { lists, publishableKeyLists, publishableKeys, type PublishableKey } from "../db/schema";

const WHAT = "publishable key";
const toKey = rowMapper(publishableKeys);

export type KeyWithLists = { row: PublishableKey; lists: number[] };

type NewKey = { name: string; lists?: number[]; origins?: string[]; expires_at?: string };

/** 400 naming each list that is not one of the account's, by its place in the body. */
async function assertOwnLists(d1: D1Database, accountId: number, ids: readonly number[]): Promise<void> {
  const owned = await database(d1)
    .select({ id: lists.id })
    .from(lists)
    .where(
      and(eq(lists.account_id, accountId), sql`${lists.id} IN (SELECT value FROM json_each(${JSON.stringify(ids)}))`),
    );
  const found = new Set(owned.map((row) => row.id));
  const index = ids.findIndex((id) => !found.has(id));
  if (index >= 0) throw fieldError(`/lists/${index}`, `is not one of your lists (${ids[index]})`);
}

/** Creates a key; returns it with the key itself, which is not stored. */
export async function createKey(
  d1: D1Database,
  accountId: number,
  values: NewKey,
): Promise<KeyWithLists & { key: string }> {
  if (values.lists) await assertOwnLists(d1, accountId, values.lists);
  const key = generatePublishableKey();
  const keyHash = await hashSecret(key);
  const db = database(d1);
  const insertKey = db
    .insert(publishableKeys)
    .values({
      account_id: accountId,
      name: values.name,
      key_hash: keyHash,
      key_prefix: key.slice(0, KEY_PREFIX_LENGTH),
      every_list: values.lists === undefined,
      origins: values.origins ?? null,
      expires_at: values.expires_at === undefined ? null : new Date(values.expires_at),
    })
    .returning();
  const listIds = values.lists ?? [];
  const keyStatement = insertKey.toSQL();
  // A list deleted between the check and the write leaves a grant that matches nothing, as a list
  // deleted later does: the grants are the directory's, the lists the account's shard's (docs/scaling.md).
  const [inserted] = await d1.batch([
    d1.prepare(keyStatement.sql).bind(...keyStatement.params),
    // The new key's id, found by its hash inside the same transaction.
    d1
      .prepare(
        `INSERT INTO publishable_key_lists (key_id, list_id)
        SELECT (SELECT id FROM publishable_keys WHERE key_hash = ?1), value FROM json_each(?2)`,
      )
      .bind(keyHash, JSON.stringify(listIds)),
  ]);
  return { row: toKey(inserted!.results[0] as Record<string, unknown>), lists: listIds, key };
}

async function listsOf(d1: D1Database, keyIds: readonly number[]): Promise<Map<number, number[]>> {
  const rows = await database(d1)
    .select()
    .from(publishableKeyLists)
    .where(sql`${publishableKeyLists.key_id} IN (SELECT value FROM json_each(${JSON.stringify(keyIds)}))`)
    .orderBy(publishableKeyLists.key_id, publishableKeyLists.list_id);
  // A deleted list leaves its grants behind (they live in the directory, the lists in the account's shard).
  const listIds = [...new Set(rows.map((row) => row.list_id))];
  const existing = new Set(
    (
      await database(d1)
        .select({ id: lists.id })
        .from(lists)
        .where(sql`${lists.id} IN (SELECT value FROM json_each(${JSON.stringify(listIds)}))`)
    ).map((row) => row.id),
  );
  const byKey = new Map<number, number[]>();
  for (const { key_id, list_id } of rows) {
    if (existing.has(list_id)) byKey.set(key_id, [...(byKey.get(key_id) ?? []), list_id]);
  }
  return byKey;
}

/** The account's key; 404 if there is none, 403 if it is another account's. */
export async function getKey(d1: D1Database, accountId: number, id: number): Promise<KeyWithLists> {
  const row = await database(d1).select().from(publishableKeys).where(eq(publishableKeys.id, id)).get();
  const owned = ownedOr404(row, accountId, WHAT);
  return { row: owned, lists: (await listsOf(d1, [id])).get(id) ?? [] };
}

/** One keyset page of the account's keys, over the `(account_id, id)` index. */
export async function pageKeys(d1: D1Database, accountId: number, bound: Bound, take: number): Promise<KeyWithLists[]> {
  const { where, orderBy } = keyset([publishableKeys.id], bound);
  const rows = await database(d1)
    .select()
    .from(publishableKeys)
    .where(and(eq(publishableKeys.account_id, accountId), where))
    .orderBy(...orderBy)
    .limit(take);
  const byKey = await listsOf(
    d1,
    rows.map((row) => row.id),
  );
  return rows.map((row) => ({ row, lists: byKey.get(row.id) ?? [] }));
}

/** Revokes a key: deletes it and the lists it read. */
export async function revokeKey(d1: D1Database, accountId: number, id: number): Promise<void> {
  const deleted = await database(d1)
    .delete(publishableKeys)
    .where(and(eq(publishableKeys.id, id), eq(publishableKeys.account_id, accountId)))
    .returning({ id: publishableKeys.id })
    .get();
  if (!deleted) await throwMissingOrForbidden(d1, publishableKeys, id, accountId, WHAT);
}
