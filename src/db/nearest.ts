/**
 * Nearest first without reading the whole account: the page is read within a
 * circle around the point, the smallest that can hold it, grown fourfold
 * until the page is full (or the circle is the radius asked for). A page of
 * rows all within the circle is the right page, since every row outside it
 * is farther.
 *
 * The first circle comes from a probe that counts, capped at a page, the
 * account's pinpoints in the boxes around circles of 125 m, 250 m, …
 * 16,384 km, and takes the first box that holds a page: the circle through
 * that box's corners (√2 times its radius) holds the box, so a page reads
 * about the same number of rows in a dense city as in an empty ocean. Probe
 * and read are one statement: the probe's answer picks, inside SQLite, the
 * row of a table of candidate circles whose radius and boxes the read uses.
 */
import { sql, type SQL } from "drizzle-orm";
import { circleRects, HALF_CIRCUMFERENCE, intersect, rects, rtreeIds, widen, type BBox, type Point } from "./geo";
import type { Bound } from "./keyset";
import { rawRows } from "./raw-rows";

const PROBE_RADII = Array.from({ length: 18 }, (_, i) => 125 * 2 ** i);

const WORLD: BBox = { minLon: -180, maxLon: 180, minLat: -90, maxLat: 90 };

/** The boxes to search for a circle (everywhere from half the circumference on), within the bbox filter if any. */
export const searchRects = (near: Point, radius: number, bbox: BBox | undefined): BBox[] => {
  const circle = radius >= HALF_CIRCUMFERENCE ? [WORLD] : circleRects(near, radius);
  return bbox ? intersect(circle, rects(bbox)) : circle;
};

/**
 * Where a read looks. `tables` goes before the read's first table in its FROM
 * clause (joined with CROSS JOIN, or empty); `ids` is the subquery of the ids
 * the R*Tree proposes, `radius` the distance no row may exceed, and `level`
 * the probe's answer to select as `search_level`.
 */
export type Within = { tables: SQL; ids: SQL; radius: SQL; level: SQL };

export type NearestOptions = {
  accountId: number;
  near: Point & { radius?: number };
  bbox?: BBox;
  bound: Bound;
  take: number;
};

const literal = (n: number) => sql.raw(String(n));

/**
 * Reads a nearest-first page: `page(within)` is the SQL of the rows within a
 * circle in `[distance, id]` order from `bound`; the raw rows come back.
 */
export async function nearestPage(
  d1: D1Database,
  options: NearestOptions,
  page: (within: Within) => SQL,
): Promise<Record<string, unknown>[]> {
  const { accountId, near, bbox, bound, take } = options;
  const cap = Math.min(near.radius ?? Infinity, HALF_CIRCUMFERENCE);
  const read = async (radius: number) => {
    const boxes = searchRects(near, radius, bbox);
    if (boxes.length === 0) return [];
    const within = { tables: sql``, ids: rtreeIds(accountId, boxes), radius: literal(radius), level: sql`NULL` };
    return rawRows(d1, page(within));
  };
  // Backwards, every row of the page is nearer than the bound: one circle holds them all.
  if (bound?.direction === "before") return read(Math.min(cap, Number(bound.key[0])));
  const from = bound ? Number(bound.key[0]) : 0;
  const radii = PROBE_RADII.filter((r) => 2 * r < cap);
  // The circle each answer of the probe reads: level i the one through the corners of box i; -1 (no box holds a page) `cap`.
  const radiusOf = (level: number) => (level < 0 ? cap : Math.min(cap, from + Math.SQRT2 * radii[level]!));
  let rows = await rawRows(d1, probedPage(options, radii, radiusOf, page));
  if (rows.length >= take) return rows;
  // Short (filters the probe does not apply): grow from the circle read, asking the probe again if no row told it.
  const level = rows.length
    ? Number(rows[0]!.search_level)
    : Number((await rawRows(d1, sql`SELECT ${probe(options, radii)} AS level`))[0]!.level);
  let radius = radiusOf(level);
  while (rows.length < take && radius < cap) {
    radius = Math.min(cap, radius * 4);
    rows = await read(radius);
  }
  return rows;
}

/** SQL: the index of the first probe circle whose boxes hold a page of the account's entries, or -1. */
function probe({ accountId, near, bbox, take }: NearestOptions, radii: number[]): SQL {
  if (radii.length === 0) return sql`-1`;
  // CASE evaluates its branches in order and stops at the first that holds.
  const branches = radii.map((r, i) => {
    const boxes = searchRects(near, r, bbox);
    const count = boxes.length ? sql`(SELECT count(*) FROM (${rtreeIds(accountId, boxes, take)}))` : sql`0`;
    return sql`WHEN ${count} >= ${literal(take)} THEN ${literal(i)}`;
  });
  return sql`CASE ${sql.join(branches, sql` `)} ELSE -1 END`;
}

/**
 * One statement: the probe, joined to its row(s) of the table of candidate
 * circles (one per box: a circle split at the antimeridian has two), whose
 * bounds the R*Tree reads. SQLite computes the probe once, before the read.
 */
function probedPage(
  options: NearestOptions,
  radii: number[],
  radiusOf: (level: number) => number,
  page: (within: Within) => SQL,
): SQL {
  const { accountId, near, bbox } = options;
  const rows = [...radii.keys(), -1].flatMap((level) =>
    searchRects(near, radiusOf(level), bbox).map((r) => {
      const bounds = [widen(r.minLon, -1), widen(r.maxLon, 1), widen(r.minLat, -1), widen(r.maxLat, 1)];
      return `(${[level, radiusOf(level), ...bounds].join(", ")})`;
    }),
  );
  // A circle outside the bbox filter has no box: a row no entry overlaps keeps the join's shape.
  if (rows.length === 0) rows.push("(-1, 0, 1000, 1000, 1000, 1000)");
  const account = literal(Math.trunc(accountId));
  return sql`WITH probe(level) AS MATERIALIZED (SELECT ${probe(options, radii)}),
    circles(level, radius, min_lon, max_lon, min_lat, max_lat) AS (VALUES ${sql.raw(rows.join(", "))})
    ${page({
      tables: sql`probe CROSS JOIN circles AS circle ON circle.level = probe.level CROSS JOIN `,
      ids: sql`SELECT id FROM pinpoints_rtree WHERE min_account <= ${account} AND max_account >= ${account} AND max_lon >= circle.min_lon AND min_lon <= circle.max_lon AND max_lat >= circle.min_lat AND min_lat <= circle.max_lat`,
      radius: sql`circle.radius`,
      level: sql`probe.level`,
    })}`;
}
