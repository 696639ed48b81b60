/**
 * The map questions over events (docs/map-queries.md): when (`from`/`to`), where (`bbox`,
 * a point and `radius`, through the event's pinpoint), what (`q`, `tags`) and
 * what changed (`updated_since`). Each order is a keyset over a composite key
 * ending in the event's id:
 *
 * - with `from` or `to`: `[start, id]`, the start of the event's first
 *   occurrence overlapping `[from, to)`, read in order from the
 *   `event_occurrences` index. An occurrence that started before `from` may
 *   still overlap it: the scan starts the account's longest occurrence
 *   before `from` (read from an index on `end - start`), so its cost does not
 *   grow with the account's past;
 * - else with a point: `[distance, id]` of the event's pinpoint (src/db/search/nearest.ts);
 * - else with `q`: `[tier, id]`: every word in the name, then in the name or
 *   tags, then anywhere (src/db/search/text-search.ts);
 * - otherwise `[id]`.
 */
import { sql, type SQL } from "drizzle-orm";
import { distanceSql, inBoxSql, type BBox, type Point } from "../db/search/geo";
import type { Bound } from "../db/keyset";
import { nearestPage } from "../db/search/nearest";
import { publishedPinpointSql, type PublishedLists } from "../db/published";
import { rawRows, rowMapper } from "../db/search/raw-rows";
import { events, type Event } from "../db/schema";
import { and, hasTags, keysetSql, readTiers, tierReads } from "../db/search/search-sql";
import { matchingIds, tierMatches, type TextQuery } from "../db/search/text-search";
import { assertTextIndexComplete } from "../db/search/text-index";

export type EventSearch = {
  from?: number;
  to?: number;
  bbox?: BBox;
  near?: Point & { radius?: number };
  q?: TextQuery;
  tags?: string[];
  updatedSince?: number;
  pinpoint?: number;
  /**
   * Only the events at pinpoints in these lists (null: in any list): what a publishable key reading them
   * sees (src/db/published.ts), or a list collaborator (src/db/reach.ts).
   */
  within?: PublishedLists;
};

/** A result row with what orders it. */
export type FoundEvent = Event & { distance?: number; first_start?: number; tier?: number };

const toEvent = rowMapper(events);

const order = (s: EventSearch) =>
  s.from !== undefined || s.to !== undefined ? "time" : s.near ? "distance" : s.q ? "relevance" : "id";

export function eventSortKeyOf(s: EventSearch): (row: FoundEvent) => number[] {
  switch (order(s)) {
    case "time":
      return (row) => [row.first_start!, row.id];
    case "distance":
      return (row) => [row.distance!, row.id];
    case "relevance":
      return (row) => [row.tier!, row.id];
    default:
      return (row) => [row.id];
  }
}

export const EVENT_TIERS = [["name"], ["name", "tags"]] as const;

/** The event's pinpoint, `p`, joined by primary key when a place matters (every event has one). */
const pinpointOf = (s: EventSearch) =>
  s.bbox || s.near ? sql`CROSS JOIN pinpoints AS p ON p.id = events.pinpoint_id` : sql``;

/** Conditions on the event and its pinpoint `p` every order shares. */
function filters(accountId: number, s: EventSearch, { withText }: { withText: boolean }): SQL[] {
  const where: SQL[] = [sql`events.account_id = ${accountId}`];
  if (s.pinpoint !== undefined) where.push(sql`events.pinpoint_id = ${s.pinpoint}`);
  where.push(...hasTags(sql`events.tags`, s.tags ?? []));
  if (s.updatedSince !== undefined) where.push(sql`events.updated_at >= ${s.updatedSince}`);
  if (s.bbox) where.push(inBoxSql(s.bbox, sql`p.latitude`, sql`p.longitude`));
  if (s.near?.radius !== undefined) where.push(sql`${placeDistance(s.near)} <= ${s.near.radius}`);
  if (withText && s.q) where.push(sql`+events.id IN (${matchingIds("events_fts", s.q)})`);
  if (s.within !== undefined) where.push(publishedPinpointSql(s.within, sql`events.pinpoint_id`));
  return where;
}

const placeDistance = (near: Point) => distanceSql(near, sql`p.latitude`, sql`p.longitude`);
const distanceColumn = (s: EventSearch) => (s.near ? sql`${placeDistance(s.near)}` : sql`NULL`);

const found = (r: Record<string, unknown>): FoundEvent => ({
  ...toEvent(r),
  ...(r.distance === null || r.distance === undefined ? {} : { distance: Number(r.distance) }),
  ...(r.first_start === undefined ? {} : { first_start: Number(r.first_start) }),
  ...(r.tier === undefined ? {} : { tier: Number(r.tier) }),
});

export async function searchEvents(
  d1: D1Database,
  accountId: number,
  s: EventSearch,
  bound: Bound,
  take: number,
): Promise<FoundEvent[]> {
  if (s.q) await assertTextIndexComplete(d1);
  switch (order(s)) {
    case "time":
      return byTime(d1, accountId, s, bound, take);
    case "distance":
      return nearest(d1, accountId, s, s.near!, bound, take);
    case "relevance":
      return byText(d1, accountId, s, s.q!, bound, take);
    default: {
      const keyset = keysetSql([sql`events.id`], bound);
      const where = [...filters(accountId, s, { withText: true }), ...keyset.where];
      const raw = await rawRows(
        d1,
        sql`SELECT events.*, ${distanceColumn(s)} AS distance FROM events ${pinpointOf(s)} WHERE ${and(where)} ORDER BY ${keyset.order} LIMIT ${take}`,
      );
      return raw.map(found);
    }
  }
}

/** Occurrences overlapping `[from, to)`; one that lasts no time overlaps when it starts within. */
function overlapping(alias: string, accountId: number, { from, to }: EventSearch): SQL[] {
  const o = sql.raw(alias);
  const where: SQL[] = [sql`${o}.account_id = ${accountId}`];
  if (to !== undefined) where.push(sql`${o}.start < ${to}`);
  if (from !== undefined) {
    where.push(
      sql`${o}.start >= ${from} - (SELECT max("end" - start) FROM event_occurrences WHERE account_id = ${accountId})`,
      sql`(${o}."end" > ${from} OR ${o}.start >= ${from})`,
    );
  }
  return where;
}

async function byTime(d1: D1Database, accountId: number, s: EventSearch, bound: Bound, take: number) {
  const keyset = keysetSql([sql`o.start`, sql`o.event_id`], bound);
  // Each event once, at its first overlapping occurrence (ties between equal starts by rowid).
  const first = sql`NOT EXISTS (SELECT 1 FROM event_occurrences AS e WHERE e.event_id = o.event_id AND (e.start, e.rowid) < (o.start, o.rowid) AND ${and(overlapping("e", accountId, s))})`;
  const where = [
    ...overlapping("o", accountId, s),
    first,
    ...keyset.where,
    ...filters(accountId, s, { withText: true }),
  ];
  const raw = await rawRows(
    d1,
    sql`SELECT events.*, o.start AS first_start, ${distanceColumn(s)} AS distance FROM event_occurrences AS o CROSS JOIN events ON events.id = o.event_id ${pinpointOf(s)} WHERE ${and(where)} ORDER BY ${keyset.order} LIMIT ${take}`,
  );
  return raw.map(found);
}

async function nearest(
  d1: D1Database,
  accountId: number,
  s: EventSearch,
  near: Point & { radius?: number },
  bound: Bound,
  take: number,
) {
  const distance = placeDistance(near);
  const keyset = keysetSql([distance, sql`events.id`], bound);
  const where = [...filters(accountId, s, { withText: true }), ...keyset.where];
  // The pinpoints in the circle drive; their events come by the (pinpoint_id, id) index.
  const raw = await nearestPage(
    d1,
    { accountId, near, bbox: s.bbox, bound, take },
    (within) =>
      sql`SELECT ${within.level} AS search_level, events.*, ${distance} AS distance FROM ${within.tables}pinpoints AS p CROSS JOIN events ON events.pinpoint_id = p.id WHERE ${and([sql`p.id IN (${within.ids})`, sql`${distance} <= ${within.radius}`, ...where])} ORDER BY ${keyset.order} LIMIT ${take}`,
  );
  return raw.map(found);
}

async function byText(d1: D1Database, accountId: number, s: EventSearch, q: TextQuery, bound: Bound, take: number) {
  const where = filters(accountId, s, { withText: false });
  const tiers = tierMatches(q, EVENT_TIERS);
  const backwards = bound?.direction === "before";
  const reads = tierReads(tiers.length, bound, sql`events_fts.rowid`);
  // FTS5 drives (CROSS JOIN keeps it outer) and yields rowids in order, so LIMIT stops the read early.
  const raw = await readTiers(
    d1,
    reads,
    take,
    ({ tier, id }, limit) =>
      sql`SELECT events.*, ${tier} AS tier, ${distanceColumn(s)} AS distance FROM events_fts CROSS JOIN events ON events.id = events_fts.rowid ${pinpointOf(s)} WHERE events_fts MATCH ${tiers[tier - 1]!} AND ${and(id ? [id, ...where] : where)} ORDER BY events_fts.rowid${backwards ? sql` DESC` : sql``} LIMIT ${limit}`,
  );
  return raw.map(found);
}
