/**
 * Events in D1: every read and write is scoped to the caller's account, and
 * the pinpoint an event names must be the caller's too (CONTRACT "Access").
 */
import { and, eq } from "drizzle-orm";
import { fieldError, forbidden } from "../core/problem";
import { database } from "../db/client";
import { isForeignKeyViolation } from "../db/errors";
import { keyset, type Bound } from "../db/keyset";
import { ownedRows, type Writer } from "../db/owned";
import type { Expected } from "../db/versions";
import { MissingHere, ownedOr404 } from "../db/ownership";
import { withSearchColumns } from "../fields/search-columns";
import { events, pinpoints, type Event } from "../db/schema";

const noSuchPinpoint = () => fieldError("/pinpoint", "must name an existing pinpoint");

/** Create, get, update (partial), delete and page of the caller's events. */
const eventTable = ownedRows(events, {
  what: "event",
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
    expected?: Expected,
  ) => eventTable.update(d1, writer, id, withSearchColumns(values), expected),
};

/** The owner check of a pinpoint named in a body: 400 at `/pinpoint` if it does not exist, 403 if not the caller's. */
function checkPinpoint(owner: { account_id: number } | undefined, accountId: number, pinpointId: number): void {
  if (!owner) throw new MissingHere("pinpoint", "pinpoints", pinpointId, noSuchPinpoint());
  if (owner.account_id !== accountId) throw forbidden("pinpoint");
}

const pinpointOwner = (d1: D1Database, pinpointId: number) =>
  database(d1).select({ account_id: pinpoints.account_id }).from(pinpoints).where(eq(pinpoints.id, pinpointId));

/** Checks, before anything is stored, that a new event may be placed at `pinpointId`. */
export async function assertEventPinpoint(d1: D1Database, accountId: number, pinpointId: number): Promise<void> {
  checkPinpoint(await pinpointOwner(d1, pinpointId).get(), accountId, pinpointId);
}

/** 404/403 unless pinpoint `pinpointId` exists and is the caller's (a `?pinpoint=` filter). */
export async function assertPinpointOwner(d1: D1Database, accountId: number, pinpointId: number): Promise<void> {
  ownedOr404(await pinpointOwner(d1, pinpointId).get(), accountId, "pinpoint", { table: pinpoints, id: pinpointId });
}

/**
 * The caller's event about to be updated (404/403 on the path), and, when the
 * update moves it, the check of its new pinpoint; one round trip for both.
 */
export async function eventForUpdate(
  d1: D1Database,
  accountId: number,
  id: number,
  pinpointId: number | undefined,
): Promise<Event> {
  if (pinpointId === undefined) return eventRows.get(d1, accountId, id);
  const db = database(d1);
  const [event, owner] = await db.batch([
    db.select().from(events).where(eq(events.id, id)),
    pinpointOwner(d1, pinpointId),
  ]);
  const row = ownedOr404(event[0], accountId, "event", { table: events, id });
  checkPinpoint(owner[0], accountId, pinpointId);
  return row;
}

/**
 * One keyset page of the events at a pinpoint, read in the same round trip
 * as the pinpoint's owner; 404/403 for a missing or foreign pinpoint.
 */
export async function pagePinpointEvents(
  d1: D1Database,
  accountId: number,
  pinpointId: number,
  bound: Bound,
  take: number,
): Promise<Event[]> {
  const db = database(d1);
  const { where, orderBy } = keyset([events.id], bound);
  const [owner, rows] = await db.batch([
    pinpointOwner(d1, pinpointId),
    // Served by the (pinpoint_id, id) index; the account test is a second fence.
    db
      .select()
      .from(events)
      .where(and(eq(events.pinpoint, pinpointId), eq(events.account_id, accountId), where))
      .orderBy(...orderBy)
      .limit(take),
  ]);
  ownedOr404(owner[0], accountId, "pinpoint", { table: pinpoints, id: pinpointId });
  return rows;
}
