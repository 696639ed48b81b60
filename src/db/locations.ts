/** Where pinpoints are, by id: what an event needs to be drawn on a map. */
import { and, eq, sql } from "drizzle-orm";
import { database } from "./client";
import { pinpoints } from "./schema";

export type PinpointLocation = { latitude: number; longitude: number; altitude: number | null };

/**
 * The locations of the caller's pinpoints among `ids`, in one query whatever
 * their number (one JSON parameter, as D1 allows only 100 bound ones).
 */
export async function pinpointLocations(
  d1: D1Database,
  accountId: number,
  ids: readonly number[],
): Promise<Map<number, PinpointLocation>> {
  if (ids.length === 0) return new Map();
  const rows = await database(d1)
    .select({
      id: pinpoints.id,
      latitude: pinpoints.latitude,
      longitude: pinpoints.longitude,
      altitude: pinpoints.altitude,
    })
    .from(pinpoints)
    .where(
      and(
        eq(pinpoints.account_id, accountId),
        sql`${pinpoints.id} in (select value from json_each(${JSON.stringify(ids)}))`,
      ),
    );
  return new Map(rows.map(({ id, ...location }) => [id, location]));
}
