/**
 * The map questions over pinpoints (docs/map-queries.md): what is in a box, what is near
 * a point (nearest first), what matches a text, with tags, categories and a
 * change time as filters. Each order is a keyset over a composite key ending
 * in the id, so a page reads only what it shows plus what the index needs:
 *
 * - near a point: `[distance, id]`. The R*Tree proposes the points in the box
 *   around a circle, the exact great-circle distance decides; without a
 *   radius the circle grows (src/db/search/nearest.ts).
 * - text: `[tier, id]` (src/db/search/text-search.ts), read from the full-text index in id order.
 * - a list in its owner's order (`order=position`): `[position, id]`, the list's
 *   members read in that order (`list_pinpoints_order_idx`) with an exact test
 *   per member, which stops after a page.
 * - otherwise `[id]`. A box holding few of the account's points is read from
 *   the R*Tree and sorted; a box holding many is read in id order with an
 *   exact test per row, which stops after a page.
 */
import { sql, type SQL } from "drizzle-orm";
import { distanceSql, inBoxSql, rects, rtreeIds } from "../db/search/geo";
import type { BBox, Point } from "../db/search/geo";
import { rawRows, rowMapper } from "../db/search/raw-rows";
import { pinpoints, type Pinpoint } from "../db/schema";
import { matchingIds, tierMatches, type TextQuery } from "../db/search/text-search";
import { assertTextIndexComplete } from "../db/search/text-index";
import type { Bound } from "../db/keyset";
import { nearestPage } from "../db/search/nearest";
import { publishedPinpointSql, type PublishedLists } from "../db/published";
import { and, hasTags, inList, keysetSql, readTiers, tierReads } from "../db/search/search-sql";
import type { ListOrder } from "./store";

export type PinpointSearch = {
  bbox?: BBox;
  near?: Point & { radius?: number };
  q?: TextQuery;
  tags?: string[];
  category?: number[];
  updatedSince?: number;
  list?: number;
  /** `position`: the list's members in its owner's order (`list` is required), instead of by id. */
  order?: ListOrder;
  /**
   * Only the pinpoints in these lists (null: in any list): what a publishable key reading them sees
   * (src/db/published.ts), or a list collaborator (src/db/reach.ts).
   */
  within?: PublishedLists;
};

/** A result row with what orders it: the distance from the point, the text tier, or the list position. */
export type FoundPinpoint = Pinpoint & { distance?: number; tier?: number; position?: number };

const toPinpoint = rowMapper(pinpoints);

/** The keyset order a search answers in. */
export const searchOrder = (s: PinpointSearch) =>
  s.near ? "distance" : s.q ? "relevance" : s.order === "position" && s.list !== undefined ? "position" : "id";

export function sortKeyOf(s: PinpointSearch): (row: FoundPinpoint) => number[] {
  switch (searchOrder(s)) {
    case "distance":
      return (row) => [row.distance!, row.id];
    case "relevance":
      return (row) => [row.tier!, row.id];
    case "position":
      return (row) => [row.position!, row.id];
    default:
      return (row) => [row.id];
  }
}

/** The full-text tiers of pinpoints: name, then name/address/tags, then anywhere. */
export const PINPOINT_TIERS = [["name"], ["name", "address", "tags"]] as const;

/** A box with at most this many of the account's points is read from the R*Tree and sorted. */
const SMALL_BOX = 512;

/**
 * SQL conditions every order shares: the account, then each filter on the exact columns.
 * At most one `id IN (…)` may drive a query (SQLite would otherwise join the lists pairwise),
 * so the list's and the text's are plain tests (`+id`) unless `listDrives`.
 */
function filters(accountId: number, s: PinpointSearch, options: { withText: boolean; listDrives?: boolean }): SQL[] {
  const where: SQL[] = [sql`pinpoints.account_id = ${accountId}`];
  if (s.bbox) where.push(inBoxSql(s.bbox, sql`pinpoints.latitude`, sql`pinpoints.longitude`));
  where.push(...hasTags(sql`pinpoints.tags`, s.tags ?? []));
  if (s.category) where.push(inList(sql`pinpoints.category_id`, s.category));
  if (s.updatedSince !== undefined) where.push(sql`pinpoints.updated_at >= ${s.updatedSince}`);
  if (s.list !== undefined) {
    const id = options.listDrives ? sql`pinpoints.id` : sql`+pinpoints.id`;
    where.push(sql`${id} IN (SELECT pinpoint_id FROM list_pinpoints WHERE list_id = ${s.list})`);
  }
  if (options.withText && s.q) where.push(sql`+pinpoints.id IN (${matchingIds("pinpoints_fts", s.q)})`);
  if (s.within !== undefined) where.push(publishedPinpointSql(s.within, sql`pinpoints.id`));
  return where;
}

/**
 * The conditions a pinpoint of `accountId` must meet to match `s`, on the exact columns of
 * `pinpoints` (every filter, the text and the lists it is within included), for a read that chooses
 * its own candidates: the vector tiles' (src/tiles/).
 */
export const searchConditions = (accountId: number, s: PinpointSearch): SQL[] =>
  filters(accountId, s, { withText: true });

export async function searchPinpoints(
  d1: D1Database,
  accountId: number,
  s: PinpointSearch,
  bound: Bound,
  take: number,
): Promise<FoundPinpoint[]> {
  if (s.q) await assertTextIndexComplete(d1);
  if (s.near) return nearest(d1, accountId, s, s.near, bound, take);
  if (s.q) return byText(d1, accountId, s, s.q, bound, take);
  if (searchOrder(s) === "position") return byPosition(d1, accountId, s, s.list!, bound, take);
  return byId(d1, accountId, s, bound, take);
}

/** A list's members in its owner's order, each tested against the filters, until a page is found. */
async function byPosition(
  d1: D1Database,
  accountId: number,
  s: PinpointSearch,
  list: number,
  bound: Bound,
  take: number,
) {
  const keyset = keysetSql([sql`m.position`, sql`m.pinpoint_id`], bound);
  // The membership drives: the list's filter is the join itself.
  const where = [sql`m.list_id = ${list}`, ...filters(accountId, { ...s, list: undefined }, { withText: true })];
  const raw = await rawRows(
    d1,
    sql`SELECT pinpoints.*, m.position AS position FROM list_pinpoints AS m CROSS JOIN pinpoints ON pinpoints.id = m.pinpoint_id
      WHERE ${and([...where, ...keyset.where])} ORDER BY ${keyset.order} LIMIT ${take}`,
  );
  return raw.map((r): FoundPinpoint => ({ ...toPinpoint(r), position: Number(r.position) }));
}

async function byId(d1: D1Database, accountId: number, s: PinpointSearch, bound: Bound, take: number) {
  const keyset = keysetSql([sql`pinpoints.id`], bound);
  const read = (where: SQL[], limit: SQL = sql`${take}`) =>
    sql`SELECT pinpoints.* FROM pinpoints WHERE ${and([...where, ...keyset.where])} ORDER BY ${keyset.order} LIMIT ${limit}`;
  const inOrder = (limit?: SQL) => read(filters(accountId, s, { withText: true, listDrives: true }), limit);
  if (!s.bbox) return (await rawRows(d1, inOrder())).map(toPinpoint);
  // Few of the account's points in the box: read them from the R*Tree and sort; many: read in id
  // order with the exact test, which stops after a page. A capped count of the box decides.
  const boxes = rects(s.bbox);
  const count = sql`SELECT count(*) AS n FROM (${rtreeIds(accountId, boxes, SMALL_BOX)})`;
  const fromTree = (limit: SQL) =>
    read(
      [
        ...filters(accountId, s, { withText: true, listDrives: false }),
        sql`pinpoints.id IN (${rtreeIds(accountId, boxes)})`,
      ],
      limit,
    );
  // One statement: the count sets one branch's LIMIT to 0, which SQLite tests before reading a row.
  // The filters are written in both branches: with 20 tags and 20 categories, 96 of D1's 100 bound parameters.
  const small = sql`(SELECT n FROM probe) < ${sql.raw(String(SMALL_BOX))}`;
  const limit = sql.raw(String(Math.trunc(take)));
  const both = sql`WITH probe(n) AS MATERIALIZED (${count})
    SELECT * FROM (${fromTree(sql`CASE WHEN ${small} THEN ${limit} ELSE 0 END`)})
    UNION ALL SELECT * FROM (${inOrder(sql`CASE WHEN ${small} THEN 0 ELSE ${limit} END`)})`;
  return (await rawRows(d1, both)).map(toPinpoint);
}

async function byText(d1: D1Database, accountId: number, s: PinpointSearch, q: TextQuery, bound: Bound, take: number) {
  const where = filters(accountId, s, { withText: false });
  const tiers = tierMatches(q, PINPOINT_TIERS);
  const backwards = bound?.direction === "before";
  const reads = tierReads(tiers.length, bound, sql`pinpoints_fts.rowid`);
  // FTS5 drives (CROSS JOIN keeps it outer) and yields rowids in order, so LIMIT stops the read early.
  const raw = await readTiers(
    d1,
    reads,
    take,
    ({ tier, id }, limit) =>
      sql`SELECT pinpoints.*, ${tier} AS tier FROM pinpoints_fts CROSS JOIN pinpoints ON pinpoints.id = pinpoints_fts.rowid WHERE pinpoints_fts MATCH ${tiers[tier - 1]!} AND ${and(id ? [id, ...where] : where)} ORDER BY pinpoints_fts.rowid${backwards ? sql` DESC` : sql``} LIMIT ${limit}`,
  );
  return raw.map((r): FoundPinpoint => ({ ...toPinpoint(r), tier: Number(r.tier) }));
}

async function nearest(
  d1: D1Database,
  accountId: number,
  s: PinpointSearch,
  near: Point & { radius?: number },
  bound: Bound,
  take: number,
) {
  const distance = distanceSql(near, sql`pinpoints.latitude`, sql`pinpoints.longitude`);
  const where = filters(accountId, s, { withText: true });
  const keyset = keysetSql([distance, sql`pinpoints.id`], bound);
  const raw = await nearestPage(
    d1,
    { accountId, near, bbox: s.bbox, bound, take },
    (within) =>
      sql`SELECT ${within.level} AS search_level, pinpoints.*, ${distance} AS distance FROM ${within.tables}pinpoints WHERE ${and([...where, sql`pinpoints.id IN (${within.ids})`, sql`${distance} <= ${within.radius}`, ...keyset.where])} ORDER BY ${keyset.order} LIMIT ${take}`,
  );
  return raw.map((r): FoundPinpoint => ({ ...toPinpoint(r), distance: Number(r.distance) }));
}
