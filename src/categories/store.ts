/**
 * Categories in D1. Unlike the other resources they are shared: every caller
 * reads every category (the collection is not filtered by account), while
 * only the owning account may change or delete one, and the built-in
 * category (no owner) is read-only for everyone (docs/api.md, "Access").
 * Within the account, the caller's reach (src/db/reach.ts) narrows which:
 * categories are in no list, so a reach that does not cover the account
 * covers only the categories its person created.
 */
import { and, eq, isNull } from "drizzle-orm";
import type { Reach } from "../core/env";
import { ApiError, forbidden, notFound } from "../core/problem";
import { database } from "../db/client";
import { isForeignKeyViolation } from "../db/errors";
import { keyset, type Bound } from "../db/keyset";
import { ownedRows, type Writer } from "../db/owned";
import { roleForbidden, tableReach } from "../db/reach";
import { categories, changes, webhookOutbox, type Category } from "../db/schema";
import { missedOwnRow, versionIs, type Expected } from "../db/versions";

/** Create and (owner-scoped) update; reads and deletes follow the sharing rules below. */
export const categoryRows = ownedRows(categories, { what: "category" });

/** Any category, whoever owns it; 404 if there is none. */
export async function getCategory(d1: D1Database, id: number): Promise<Category> {
  const row = await database(d1).select().from(categories).where(eq(categories.id, id)).get();
  if (!row) throw notFound("category");
  return row;
}

/** One keyset page of all categories, built-in ones included. */
export async function pageCategories(d1: D1Database, bound: Bound, take: number): Promise<Category[]> {
  const { where, orderBy } = keyset([categories.id], bound);
  return database(d1)
    .select()
    .from(categories)
    .where(where)
    .orderBy(...orderBy)
    .limit(take);
}

/**
 * Throws unless the caller may change `row`: 403 for a built-in or another account's category, or one
 * beyond `reach` (which every caller sees: categories are shared).
 */
export function assertWritable(row: Category, accountId: number, reach: Reach): Category {
  if (row.account_id === null) {
    throw new ApiError("forbidden", `Category ${row.id} is built in and cannot be changed.`);
  }
  if (row.account_id !== accountId) throw forbidden("category");
  const { acts } = reach;
  if (acts !== null && (acts.createdBy === null || row.created_by !== acts.createdBy)) {
    throw roleForbidden(reach, "category");
  }
  return row;
}

/** The category if the caller may change it; 404 if there is none, 403 if it is not theirs or beyond `reach`. */
export async function writableCategory(d1: D1Database, accountId: number, id: number, reach: Reach): Promise<Category> {
  return assertWritable(await getCategory(d1, id), accountId, reach);
}

/**
 * Deletes the caller's category (only within `reach`, and at one of the `expected` versions if given) and
 * returns it, so its image can be removed.
 * A category some pinpoint still uses (any account's) is refused with 409 by
 * the foreign key itself, so nothing changes and nothing races.
 *
 * Its tombstone then names the deleter. Not by a stamp before the delete, as
 * the other resources do (src/db/owned.ts): a category's delete is one
 * statement that src/db/client.ts repeats on every shard, and a stamp left on
 * a category whose delete another shard refuses would name as its writer
 * someone who changed nothing. Instead the change-log entry and outbox row the
 * delete wrote here are given the actor right after it; a Worker that dies in
 * between leaves them without one (null: not known), never with a wrong one.
 */
export async function deleteCategory(
  d1: D1Database,
  { accountId, actor }: Writer,
  id: number,
  reach: Reach,
  expected: Expected = null,
): Promise<Category> {
  const { acts } = tableReach(reach, { createdBy: categories.created_by });
  const db = database(d1);
  const row = await db
    .delete(categories)
    .where(
      and(eq(categories.id, id), eq(categories.account_id, accountId), versionIs(categories.version, expected), acts),
    )
    .returning()
    .get()
    .catch((error: unknown) => {
      if (!isForeignKeyViolation(error)) throw error;
      throw new ApiError(
        "conflict",
        "The category is still used by pinpoints; give them another category before deleting it.",
      );
    });
  if (row) {
    const deletion = (table: typeof changes | typeof webhookOutbox) =>
      and(eq(table.account_id, accountId), eq(table.type, "category"), eq(table.object_id, id), eq(table.op, "delete"));
    await db.batch([
      db.update(changes).set({ actor }).where(deletion(changes)),
      db
        .update(webhookOutbox)
        .set({ actor })
        .where(and(deletion(webhookOutbox), isNull(webhookOutbox.actor))),
    ]);
    return row;
  }
  // Nothing deleted: say why (404 or 403); if it is ours after all, it changed (412) or vanished meanwhile.
  await writableCategory(d1, accountId, id, reach);
  throw missedOwnRow("category", expected);
}
