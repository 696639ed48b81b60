/**
 * Events in D1: every read and write is scoped to the caller's account and
 * reach (src/db/reach.ts), and the pinpoint an event names must be the
 * caller's too (docs/api.md, "Access").
 */
import { and, eq, sql } from "drizzle-orm";
import type { Reach } from "../core/env";
import { fieldError, forbidden, notFound } from "../core/problem";
import { database } from "../db/client";
import { isForeignKeyViolation } from "../db/errors";
import { keyset, type Bound } from "../db/keyset";
import { ownedRows, type Writer } from "../db/owned";
import type { Expected } from "../db/versions";
import { MissingHere, ownedOr404 } from "../db/ownership";
import { beyondReach, listSet, pinpointInLists, roleForbidden, tableReach } from "../db/reach";
import { rawRows, rowMapper } from "../db/search/raw-rows";
import { keysetSql } from "../db/search/search-sql";
import { withSearchColumns } from "../fields/search-columns";
import { events, pinpoints, type Event } from "../db/schema";

const noSuchPinpoint = () => fieldError("/pinpoint", "must name an existing pinpoint");

/** A pinpoint is in the lists it is a member of, and an event with its pinpoint. */
const pinpointIn = pinpointInLists(sql`pinpoints.id`);
const eventIn = pinpointInLists(sql`events.pinpoint_id`);

/** Create, get, update (partial), delete and page of the caller's events. */
const eventTable = ownedRows(events, {
  what: "event",
  inLists: eventIn,
  // The only foreign key a client chooses is `pinpoint`: a violation means it was deleted meanwhile.
  mapError(error) {
    if (isForeignKeyViolation(error)) throw noSuchPinpoint();
    throw error;
  },
});

/** Writes store the search forms of their texts alongside, for the full-text index (src/fields/search-columns.ts). */
export const eventRows = {
  ...eventTable,
  insert: (d1: D1Database, writer: Writer, values: Parameters<typeof eventTable.insert>[2]) =>
    eventTable.insert(d1, writer, withSearchColumns(values)),
  update: (
    d1: D1Database,
    writer: Writer,
    id: number,
    values: Parameters<typeof eventTable.update>[3],
    reach: Reach,
    expected?: Expected,
  ) => eventTable.update(d1, writer, id, withSearchColumns(values), reach, expected),
};

type PinpointOwner = { account_id: number; acts: number; sees: number };

/**
 * The check of a pinpoint named in a body: 400 at `/pinpoint` if it does not exist (or the caller cannot see
 * it), 403 if it is not the caller's account's or their role may not place events there.
 */
function checkPinpoint(owner: PinpointOwner | undefined, accountId: number, pinpointId: number, reach: Reach): void {
  if (!owner) throw new MissingHere("pinpoint", "pinpoints", pinpointId, noSuchPinpoint());
  if (owner.account_id !== accountId) throw forbidden("pinpoint");
  if (!owner.sees) throw noSuchPinpoint();
  if (!owner.acts) throw roleForbidden(reach, "pinpoint");
}

/** The pinpoint's account, and whether `reach` acts on it and sees it. */
function pinpointOwner(d1: D1Database, pinpointId: number, reach: Reach) {
  const within = tableReach(reach, { createdBy: pinpoints.created_by, inLists: pinpointIn });
  return database(d1)
    .select({
      account_id: pinpoints.account_id,
      acts: sql<number>`${within.acts ?? sql`1`}`.as("acts"),
      sees: sql<number>`${within.sees ?? sql`1`}`.as("sees"),
    })
    .from(pinpoints)
    .where(eq(pinpoints.id, pinpointId));
}

/**
 * Checks, before anything is stored, that a new event may be placed at `pinpointId`: one the caller's
 * account holds and `reach` (the reach of creating an event) acts on.
 */
export async function assertEventPinpoint(
  d1: D1Database,
  accountId: number,
  pinpointId: number,
  reach: Reach,
): Promise<void> {
  checkPinpoint(await pinpointOwner(d1, pinpointId, reach).get(), accountId, pinpointId, reach);
}

/** 404/403 unless pinpoint `pinpointId` exists and is the caller's, 404 if `reach` does not see it (a `?pinpoint=` filter). */
export async function assertPinpointOwner(
  d1: D1Database,
  accountId: number,
  pinpointId: number,
  reach: Reach,
): Promise<void> {
  const owner = await pinpointOwner(d1, pinpointId, reach).get();
  ownedOr404(owner, accountId, "pinpoint", { table: pinpoints, id: pinpointId });
  if (!owner!.sees) throw notFound("pinpoint");
}

/**
 * The caller's event about to be updated (404/403 on the path, or beyond `reach`), and, when the
 * update moves it, the check of its new pinpoint against `placing` (the reach of creating an event);
 * one round trip for both.
 */
export async function eventForUpdate(
  d1: D1Database,
  accountId: number,
  id: number,
  pinpointId: number | undefined,
  reach: Reach,
  placing: Reach,
): Promise<Event> {
  if (pinpointId === undefined) return eventRows.get(d1, accountId, id, reach);
  const db = database(d1);
  const within = tableReach(reach, { createdBy: events.created_by, inLists: eventIn });
  const [event, owner] = await db.batch([
    db
      .select({
        row: events,
        acts: sql<number>`${within.acts ?? sql`1`}`.as("acts"),
        sees: sql<number>`${within.sees ?? sql`1`}`.as("sees"),
      })
      .from(events)
      .where(eq(events.id, id)),
    pinpointOwner(d1, pinpointId, placing),
  ]);
  const row = ownedOr404(event[0]?.row, accountId, "event", { table: events, id });
  if (!event[0]!.acts) throw beyondReach(reach, "event", Boolean(event[0]!.sees));
  checkPinpoint(owner[0], accountId, pinpointId, placing);
  return row;
}

/**
 * One keyset page of the events at a pinpoint, read in the same round trip
 * as the pinpoint's owner; 404/403 for a missing or foreign pinpoint, 404 for
 * one `reach` does not see.
 */
export async function pagePinpointEvents(
  d1: D1Database,
  accountId: number,
  pinpointId: number,
  reach: Reach,
  bound: Bound,
  take: number,
): Promise<Event[]> {
  const db = database(d1);
  const { where, orderBy } = keyset([events.id], bound);
  const [owner, rows] = await db.batch([
    pinpointOwner(d1, pinpointId, reach),
    // Served by the (pinpoint_id, id) index; the account test is a second fence.
    db
      .select()
      .from(events)
      .where(and(eq(events.pinpoint, pinpointId), eq(events.account_id, accountId), where))
      .orderBy(...orderBy)
      .limit(take),
  ]);
  ownedOr404(owner[0], accountId, "pinpoint", { table: pinpoints, id: pinpointId });
  if (!owner[0]!.sees) throw notFound("pinpoint");
  return rows;
}

const toEvent = rowMapper(events);

/**
 * One keyset page of the events at the pinpoints of `listIds` (a list collaborator's). The pinpoints in
 * the lists drive, each through the `(pinpoint_id, id)` index of its events beyond the bound (the `+`
 * keeps SQLite from reading the account's events in id order instead): a page costs what the lists'
 * events beyond it cost to order, whatever the size of the account.
 */
export async function pageListsEvents(
  d1: D1Database,
  accountId: number,
  listIds: readonly number[],
  bound: Bound,
  take: number,
): Promise<Event[]> {
  const page = keysetSql([sql`events.id`], bound);
  const rows = await rawRows(
    d1,
    sql`SELECT events.* FROM events WHERE events.pinpoint_id IN (
        SELECT m.pinpoint_id FROM ${listSet(listIds)} AS l CROSS JOIN list_pinpoints AS m ON m.list_id = l.value)
      AND +events.account_id = ${accountId} ${page.where.length > 0 ? sql`AND ${page.where[0]!}` : sql``}
      ORDER BY ${page.order} LIMIT ${take}`,
  );
  return rows.map(toEvent);
}
