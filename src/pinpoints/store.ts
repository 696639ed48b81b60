/** Pinpoints in D1: every read and write is scoped to the caller's account and reach (src/db/reach.ts). */
import { and, eq, exists, inArray, isNotNull, sql } from "drizzle-orm";
import type { Reach } from "../core/env";
import { fieldError, notFound } from "../core/problem";
import { database } from "../db/client";
import { isForeignKeyViolation } from "../db/errors";
import { keyset, type Bound } from "../db/keyset";
import { ownedRows, type Writer } from "../db/owned";
import { ownedOr404, throwMissingOrForbidden } from "../db/ownership";
import { listSet, pinpointInLists, seesList, tableReach } from "../db/reach";
import { rawRows, rowMapper } from "../db/search/raw-rows";
import { keysetSql } from "../db/search/search-sql";
import { withSearchColumns } from "../fields/search-columns";
import { events, listPinpoints, lists, pinpoints, type Pinpoint } from "../db/schema";
import { missedOwnRow, versionIs, type Expected } from "../db/versions";

/** A pinpoint is in the lists it is a member of. */
const inLists = pinpointInLists(sql`pinpoints.id`);

/**
 * Create, get, update (partial), delete and page. Deleting a pinpoint takes
 * its list memberships and events with it (foreign key cascade).
 */
const pinpointTable = ownedRows(pinpoints, {
  what: "pinpoint",
  inLists,
  // The only foreign key a client chooses is `category`: a violation means it names no category.
  mapError(error) {
    if (isForeignKeyViolation(error)) throw fieldError("/category", "must name an existing category");
    throw error;
  },
});

/** Writes store the search forms of their texts alongside, for the full-text index (src/fields/search-columns.ts). */
export const pinpointRows = {
  ...pinpointTable,
  insert: (d1: D1Database, writer: Writer, values: Parameters<typeof pinpointTable.insert>[2]) =>
    pinpointTable.insert(d1, writer, withSearchColumns(values)),
  update: (
    d1: D1Database,
    writer: Writer,
    id: number,
    values: Parameters<typeof pinpointTable.update>[3],
    reach: Reach,
    expected?: Expected,
  ) => pinpointTable.update(d1, writer, id, withSearchColumns(values), reach, expected),
};

/** The orders of a list's pinpoints: by pinpoint id, or the owner's (src/db/list-positions.ts). */
export type ListOrder = "id" | "position";

/** A member of a list with its position in the owner's order, which orders its pages by `position`. */
export type ListedPinpoint = Pinpoint & { position: number };

/** A row's place in the pages of `order`: what a cursor continues from (by position, a list member's). */
export const listKeyOf =
  (order: ListOrder) =>
  (row: Pinpoint & { position?: number }): number[] =>
    order === "position" ? [row.position!, row.id] : [row.id];

/**
 * One keyset page of the pinpoints in a list, in `order`, read in the same round trip as the list's
 * owner; 404/403 for a missing or foreign list, 404 for one the caller's reach does not see. By id it
 * reads the membership's key, by position `list_pinpoints_order_idx`: a page costs the same at any depth.
 */
export async function pageListPinpoints(
  d1: D1Database,
  accountId: number,
  listId: number,
  reach: Reach,
  bound: Bound,
  take: number,
  order: ListOrder = "id",
): Promise<ListedPinpoint[]> {
  const db = database(d1);
  const keys = order === "position" ? [listPinpoints.position, listPinpoints.pinpoint_id] : [listPinpoints.pinpoint_id];
  const { where, orderBy } = keyset(keys, bound);
  const [list, rows] = await db.batch([
    db.select({ account_id: lists.account_id }).from(lists).where(eq(lists.id, listId)),
    db
      .select({ pinpoint: pinpoints, position: listPinpoints.position })
      .from(listPinpoints)
      .innerJoin(pinpoints, eq(pinpoints.id, listPinpoints.pinpoint_id))
      .where(and(eq(listPinpoints.list_id, listId), eq(pinpoints.account_id, accountId), where))
      .orderBy(...orderBy)
      .limit(take),
  ]);
  ownedOr404(list[0], accountId, "list", { table: lists, id: listId });
  if (!seesList(reach, listId)) throw notFound("list");
  return rows.map((r) => ({ ...r.pinpoint, position: r.position }));
}

/** 404/403 unless list `listId` exists and is the caller's; 404 if the caller's reach does not see it. */
export async function assertListOwner(d1: D1Database, accountId: number, listId: number, reach: Reach): Promise<void> {
  const db = database(d1);
  ownedOr404(
    await db.select({ account_id: lists.account_id }).from(lists).where(eq(lists.id, listId)).get(),
    accountId,
    "list",
    { table: lists, id: listId },
  );
  if (!seesList(reach, listId)) throw notFound("list");
}

const toPinpoint = rowMapper(pinpoints);

/**
 * One keyset page of the pinpoints in any of `listIds` (a list collaborator's), each once. Each list gives
 * at most a page of its members beyond the bound, read from the membership's `(list_id, pinpoint_id)` key
 * up to its page's last id, so a page costs the same however large the account, the lists or the page's
 * number: a page's size per list.
 */
export async function pageListsPinpoints(
  d1: D1Database,
  accountId: number,
  listIds: readonly number[],
  bound: Bound,
  take: number,
): Promise<Pinpoint[]> {
  const member = (alias: string) => sql.raw(`${alias}.pinpoint_id`);
  const inPage = keysetSql([member("m")], bound);
  const ends = keysetSql([member("e")], bound);
  const page = keysetSql([sql`pinpoints.id`], bound);
  const backwards = bound?.direction === "before";
  // The take-th member of the list beyond the bound (SQLite's integer limits when the list has fewer).
  const last = sql`coalesce((SELECT e.pinpoint_id FROM list_pinpoints AS e WHERE ${sql.join(
    [sql`e.list_id = l.value`, ...ends.where],
    sql` AND `,
  )} ORDER BY ${ends.order} LIMIT 1 OFFSET ${take - 1}), ${sql.raw(backwards ? "-9223372036854775808" : "9223372036854775807")})`;
  const members = sql`SELECT m.pinpoint_id FROM ${listSet(listIds)} AS l CROSS JOIN list_pinpoints AS m ON m.list_id = l.value
    WHERE ${sql.join([...inPage.where, sql`m.pinpoint_id ${sql.raw(backwards ? ">=" : "<=")} ${last}`], sql` AND `)}`;
  const rows = await rawRows(
    d1,
    sql`SELECT pinpoints.* FROM pinpoints WHERE pinpoints.account_id = ${accountId} AND pinpoints.id IN (${members})
      ${page.where.length > 0 ? sql`AND ${page.where[0]!}` : sql``} ORDER BY ${page.order} LIMIT ${take}`,
  );
  return rows.map(toPinpoint);
}

/**
 * Deletes a pinpoint (its list memberships and events go with it, by foreign
 * key cascade), only within `reach` and at one of the `expected` versions if given, and returns the media keys that are no longer referenced: its
 * own and its events'. Both are read in the same transaction as the delete,
 * so an event added meanwhile cannot take its media key along unseen. The
 * pinpoint, its events and the lists it leaves are stamped with the deleter
 * first (src/db/owned.ts), in the same transaction and only if the delete
 * will happen: the events' tombstones and the lists' new versions name who
 * deleted it.
 */
export async function deletePinpoint(
  d1: D1Database,
  { accountId, actor }: Writer,
  id: number,
  reach: Reach,
  expected: Expected = null,
): Promise<(string | null)[]> {
  const db = database(d1);
  const within = tableReach(reach, { createdBy: pinpoints.created_by, inLists });
  const target = and(
    eq(pinpoints.id, id),
    eq(pinpoints.account_id, accountId),
    versionIs(pinpoints.version, expected),
    within.acts,
  );
  const deleting = exists(db.select({ id: pinpoints.id }).from(pinpoints).where(target));
  const [eventMedia, , , , deleted] = await db.batch([
    db
      .select({ media_key: events.media_key })
      .from(events)
      .where(and(eq(events.pinpoint, id), eq(events.account_id, accountId), isNotNull(events.media_key))),
    db
      .update(events)
      .set({ updated_by: actor })
      .where(and(eq(events.pinpoint, id), eq(events.account_id, accountId), deleting)),
    db
      .update(lists)
      .set({ updated_by: actor })
      .where(
        and(
          eq(lists.account_id, accountId),
          inArray(
            lists.id,
            db.select({ id: listPinpoints.list_id }).from(listPinpoints).where(eq(listPinpoints.pinpoint_id, id)),
          ),
          deleting,
        ),
      ),
    db.update(pinpoints).set({ updated_by: actor }).where(target),
    db.delete(pinpoints).where(target).returning({ media_key: pinpoints.media_key }),
  ]);
  if (!deleted[0]) {
    const ifOwned = missedOwnRow("pinpoint", expected);
    return throwMissingOrForbidden(d1, pinpoints, id, accountId, "pinpoint", ifOwned, within);
  }
  return [deleted[0].media_key, ...eventMedia.map((e) => e.media_key)];
}
