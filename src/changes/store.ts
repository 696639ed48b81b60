/**
 * Reads of the change log (table `changes`, written by triggers; see
 * db/schema.ts): one account's entries after a sequence number, in commit
 * order, and, when asked, the rows of the objects they upserted, read in the
 * same D1 batch (one transaction), so an entry and its object always agree.
 *
 * Beside the feed that serves them (routes.ts), not in db/: what it reads is
 * the feed's, and the webhooks (src/webhooks/) deliver the same entries, so
 * changes/ is a layer of its own below the resources (.dependency-cruiser.cjs)
 * that webhooks/ may import, and which imports no resource itself.
 */
import { and, asc, eq, gt, inArray, lt, sql } from "drizzle-orm";
import { database } from "../db/client";
import {
  categories,
  changes,
  events,
  lists,
  pinpoints,
  type Category,
  type Event,
  type List,
  type Pinpoint,
} from "../db/schema";

export type Change = typeof changes.$inferSelect;
export type ChangeType = Change["type"];
export type ObjectRows = { pinpoint: Pinpoint; list: List; category: Category; event: Event };

/**
 * The account's newest sequence number (0 before its first write): where its
 * feed starts "now". Not the log's newest: the log is shared, so that one
 * would move with every other account's writes and show them. An index seek
 * on changes_account_idx (account_id, seq).
 */
export async function accountHeadSeq(d1: D1Database, accountId: number): Promise<number> {
  const row = await d1
    .prepare("SELECT coalesce(max(seq), 0) AS seq FROM changes WHERE account_id = ?")
    .bind(accountId)
    .first<{ seq: number }>();
  return row!.seq;
}

/** Up to `take` entries of the account after `afterSeq`, with the upserted objects if `withObjects`. */
export async function readChanges(
  d1: D1Database,
  accountId: number,
  afterSeq: number,
  take: number,
  withObjects: boolean,
): Promise<{ entries: Change[]; objects: { [K in ChangeType]: Map<number, ObjectRows[K]> } }> {
  const db = database(d1);
  const after = and(eq(changes.account_id, accountId), gt(changes.seq, afterSeq));
  const entries = db.select().from(changes).where(after).orderBy(asc(changes.seq)).limit(take);
  if (!withObjects) return { entries: await entries, objects: emptyObjects() };

  const page = db
    .select({ object_id: changes.object_id, type: changes.type, op: changes.op })
    .from(changes)
    .where(after)
    .orderBy(asc(changes.seq))
    .limit(take)
    .as("page");
  const upserted = (type: ChangeType) =>
    db
      .select({ id: page.object_id })
      .from(page)
      .where(and(eq(page.type, type), eq(page.op, "upsert")));
  const [rows, pinpointRows, listRows, categoryRows, eventRows] = await db.batch([
    entries,
    db
      .select()
      .from(pinpoints)
      .where(and(eq(pinpoints.account_id, accountId), inArray(pinpoints.id, upserted("pinpoint")))),
    db
      .select()
      .from(lists)
      .where(and(eq(lists.account_id, accountId), inArray(lists.id, upserted("list")))),
    db
      .select()
      .from(categories)
      .where(and(eq(categories.account_id, accountId), inArray(categories.id, upserted("category")))),
    db
      .select()
      .from(events)
      .where(and(eq(events.account_id, accountId), inArray(events.id, upserted("event")))),
  ]);
  const byId = <R extends { id: number }>(list: R[]) => new Map(list.map((row) => [row.id, row]));
  return {
    entries: rows,
    objects: {
      pinpoint: byId(pinpointRows),
      list: byId(listRows),
      category: byId(categoryRows),
      event: byId(eventRows),
    },
  };
}

function emptyObjects(): { [K in ChangeType]: Map<number, ObjectRows[K]> } {
  return { pinpoint: new Map(), list: new Map(), category: new Map(), event: new Map() };
}

/**
 * Deletes tombstones older than `before` (epoch ms; the scheduled job); returns how many. Each account's
 * newest entry stays, tombstone or not: the next change's position is counted from it (db/schema.ts
 * `changes`), and without it an account's positions would start again lower.
 */
export async function pruneTombstones(d1: D1Database, before: number): Promise<number> {
  const newest = sql`(SELECT max(newest.seq) FROM changes AS newest WHERE newest.account_id = changes.account_id)`;
  const result = await database(d1)
    .delete(changes)
    .where(and(eq(changes.op, "delete"), lt(changes.changed_at, new Date(before)), lt(changes.seq, newest)))
    .run();
  return result.meta.changes;
}
