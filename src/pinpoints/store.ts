/** Pinpoints in D1: every read and write is scoped to the caller's account. */
import { and, eq } from "drizzle-orm";
import { ownedOr404 } from "../auth/ownership";
import { database } from "../db/client";
import { isForeignKeyViolation } from "../db/errors";
import { ownedRows } from "../db/owned";
import { listPinpoints, lists, pinpoints, type Pinpoint } from "../db/schema";
import { keyset, type Bound } from "../http/pagination";
import { fieldError } from "../http/problem";

/**
 * Create, get, update (partial), delete and page. Deleting a pinpoint takes
 * its list memberships and events with it (foreign key cascade).
 */
export const pinpointRows = ownedRows(pinpoints, {
  what: "pinpoint",
  // The only foreign key a client chooses is `category`: a violation means it names no category.
  mapError(error) {
    if (isForeignKeyViolation(error)) throw fieldError("/category", "must name an existing category");
    throw error;
  },
});

/**
 * One keyset page of the pinpoints in a list, read in the same round trip as
 * the list's owner; 404/403 for a missing or foreign list.
 */
export async function pageListPinpoints(
  d1: D1Database,
  accountId: number,
  listId: number,
  bound: Bound,
  take: number,
): Promise<Pinpoint[]> {
  const db = database(d1);
  const { where, orderBy } = keyset(listPinpoints.pinpoint_id, bound);
  const [list, rows] = await db.batch([
    db.select({ account_id: lists.account_id }).from(lists).where(eq(lists.id, listId)),
    db
      .select({ pinpoint: pinpoints })
      .from(listPinpoints)
      .innerJoin(pinpoints, eq(pinpoints.id, listPinpoints.pinpoint_id))
      .where(and(eq(listPinpoints.list_id, listId), eq(pinpoints.account_id, accountId), where))
      .orderBy(orderBy)
      .limit(take),
  ]);
  ownedOr404(list[0], accountId, "list");
  return rows.map((r) => r.pinpoint);
}
