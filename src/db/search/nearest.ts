/**
 * Nearest first without reading the whole account: the page is read within a
 * circle around the point, the smallest of a ladder of circles that holds it,
 * grown fourfold until the page is full (or the circle is the radius asked
 * for). A page of rows all within the circle is the right page, since every
 * row outside it is farther.
 *
 * The circle comes from a probe that counts, capped at a page, the account's
 * index entries inside circles beyond the page's start (the distance the
 * cursor resumes from): first whole octaves, the start plus 125 m
 * (`firstStep`), twice that, … over 17 octaves, until one holds a page; then it
 * narrows that circle, halving the ring between it and the octave below until
 * the circle holds a page and fewer than four. The probe measures the circle
 * itself (by the distance of the index's own coordinates), not the boxes
 * around it, so a circle holds what the probe counted wherever it lies: near a
 * pole, where the boxes are latitude bands around every longitude, as on the
 * equator. And it counts what lies beyond the start, so a later page reads the
 * ring it needs, not a circle as wide as the first page's around an empty
 * centre (a point at the North Pole, whose nearest places are two thousand
 * kilometres off). Narrowing bounds the rows a page reads where the places are
 * few near the point and many a little farther (a city at the edge of an empty
 * sea). Only the whole octaves are written into the statement; a narrower
 * circle's boxes are its octave's scaled inside SQLite (`CirclePart`,
 * src/db/search/geo.ts), which keeps the statement short (docs/benchmarks.md "Nearest
 * first near the poles"). Probe and read are one statement: the probe's answer
 * picks, inside SQLite, the circle whose radius and boxes the read uses.
 */
import { sql, type SQL } from "drizzle-orm";
import {
  circleParts,
  type CirclePart,
  EARTH_RADIUS,
  angleCosine,
  entryCosineSql,
  HALF_CIRCUMFERENCE,
  intersect,
  partRect,
  rects,
  rtreeIds,
  type BBox,
  type Point,
} from "./geo";
import type { Bound } from "../keyset";
import { rawRows } from "./raw-rows";

/** The ladder's whole octaves: 17 from the first step. */
const OCTAVES = Array.from({ length: 18 }, (_, i) => 2 ** i);
/**
 * Narrowing stops at a circle holding fewer than this many pages by the index:
 * where places are spread evenly a circle holding a page holds up to four (its
 * area over that of the one below, which held less than a page), and reading
 * those costs less than counting again.
 */
const CROWDED = 4;
/** Narrowing's halvings at most: the ring left is a 4096th of the octave's. */
const HALVINGS = 12;
/**
 * The first step: 125 m, or a 64th of the distance a later page starts from. Every
 * circle beyond the start holds the rows before it too, which each count reads
 * again; starting near the ring a later page needs spares the counts that find nothing.
 */
const firstStep = (from: number) => Math.max(125, from / 64);

/**
 * How far the index's 32-bit coordinates (rounded outward, src/db/search/geo.ts) may put a
 * place from where it is, in metres: 1.5e-5° of longitude and 7.6e-6° of latitude at
 * most, under 3 m together. The probe counts a place only when it is this far inside
 * the ring, so every place it counts lies in the circle the read uses.
 */
const INDEX_ERROR = 5;

const WORLD: BBox = { minLon: -180, maxLon: 180, minLat: -90, maxLat: 90 };

/** A part of a circle's box (src/db/search/geo.ts) with the box of the bbox filter it is cut to (the world if none). */
type SearchPart = { part: CirclePart; clip: BBox };

/** The parts of a circle's boxes that overlap the bbox filter, each with the filter's box it overlaps. */
const searchParts = (near: Point, radius: number, bbox: BBox | undefined): SearchPart[] =>
  circleParts(near, Math.min(radius, HALF_CIRCUMFERENCE)).flatMap((part) =>
    (bbox ? rects(bbox) : [WORLD])
      .filter((clip) => intersect([partRect(near, part)], [clip]).length > 0)
      .map((clip) => ({ part, clip })),
  );

/** The boxes to search for a circle, within the bbox filter if any. */
export const searchRects = (near: Point, radius: number, bbox: BBox | undefined): BBox[] =>
  searchParts(near, radius, bbox).flatMap(({ part, clip }) => intersect([partRect(near, part)], [clip]));

/**
 * Where a read looks. `tables` goes before the read's first table in its FROM
 * clause (joined with CROSS JOIN, or empty); `ids` is the subquery of the ids
 * the R*Tree proposes, `radius` the distance no row may exceed, and `level`
 * the probe's answer (the circle's radius) to select as `search_level`.
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
  // No row within the bbox filter and the radius: nothing to probe.
  if (searchParts(near, cap, bbox).length === 0) return [];
  const from = bound ? Number(bound.key[0]) : 0;
  // The whole octaves below the cap, then the cap: the circle read when none holds a page.
  const radii = [...OCTAVES.map((octave) => from + firstStep(from) * octave).filter((r) => r < cap), cap];
  const ladder = { from, radii };
  let rows = await rawRows(d1, probedPage(options, ladder, page));
  if (rows.length >= take) return rows;
  // Short (filters the probe does not apply): grow from the circle read, asking the probe again if no row told it.
  let radius = Number(
    rows.length
      ? rows[0]!.search_level
      : (await rawRows(d1, sql`WITH ${probe(options, ladder)} SELECT radius FROM circle LIMIT 1`))[0]!.radius,
  );
  while (rows.length < take && radius < cap) {
    radius = Math.min(cap, radius * 4);
    rows = await read(radius);
  }
  return rows;
}

type Ladder = { from: number; radii: number[] };

/**
 * VALUES rows `(step, radius, lon_center, lon_half, lat_half, clip_min_lon,
 * clip_max_lon, clip_min_lat, clip_max_lat)`, a row per part of each circle's box
 * and box of the bbox filter it overlaps, in ladder order.
 */
function partRows(radii: number[], near: Point, bbox: BBox | undefined): SQL {
  const rows = radii.flatMap((radius, step) =>
    searchParts(near, radius, bbox).map(({ part, clip }) => {
      const columns = [step, radius, part.lonCenter, part.lonHalf, part.latHalf];
      return `(${[...columns, clip.minLon, clip.maxLon, clip.minLat, clip.maxLat].join(", ")})`;
    }),
  );
  return sql.raw(rows.join(", "));
}

type Bounds = { minLon: SQL; maxLon: SQL; minLat: SQL; maxLat: SQL };

/** The bounds in the columns `min_lon, max_lon, min_lat, max_lat` of `table`. */
const boundsOf = (table: string): Bounds => {
  const column = (name: string) => sql.raw(`${table}.${name}`);
  return { minLon: column("min_lon"), maxLon: column("max_lon"), minLat: column("min_lat"), maxLat: column("max_lat") };
};

/**
 * SQL of a circle of `radius` from the columns of a part row scaled by `scale`
 * (the ratio of the radius to the part's own): its box, a hair wider than
 * computed, and `within` and `reach`, which bound the cosine of the angle to an
 * index entry (`entryCosineSql`): at least `within`, the probe counts it (its
 * place is in the circle); below `reach`, its place is outside and the read skips it.
 */
function scaled(near: Point, radius: SQL, scale: SQL): Bounds & { within: SQL; reach: SQL } {
  const [lat, margin] = [literal(near.latitude), literal(1e-9)];
  const [error, earth] = [literal(INDEX_ERROR), literal(EARTH_RADIUS)];
  return {
    within: sql`cos(max(${radius} - ${error}, 0) / ${earth})`,
    reach: sql`cos(min(${radius} + ${error}, ${literal(HALF_CIRCUMFERENCE)}) / ${earth})`,
    minLon: sql`max(lon_center - ${scale} * lon_half, clip_min_lon) - ${margin}`,
    maxLon: sql`min(lon_center + ${scale} * lon_half, clip_max_lon) + ${margin}`,
    minLat: sql`max(${lat} - ${scale} * lat_half, clip_min_lat) - ${margin}`,
    maxLat: sql`min(${lat} + ${scale} * lat_half, clip_max_lat) + ${margin}`,
  };
}

/** `scaled` as the columns `within, reach, min_lon, max_lon, min_lat, max_lat`. */
function scaledBox(near: Point, radius: SQL, scale: SQL): SQL {
  const c = scaled(near, radius, scale);
  return sql`${c.within} AS within, ${c.reach} AS reach, ${c.minLon} AS min_lon, ${c.maxLon} AS max_lon, ${c.minLat} AS min_lat, ${c.maxLat} AS max_lat`;
}

/** R*Tree bounds of the index table `entry` within `box`. */
const rtreeWithin = (accountId: number, box: Bounds, entry = "pinpoints_rtree") => {
  const [account, e] = [literal(Math.trunc(accountId)), sql.raw(entry)];
  return sql`${e}.min_account <= ${account} AND ${e}.max_account >= ${account} AND ${e}.max_lon >= ${box.minLon} AND ${e}.min_lon <= ${box.maxLon} AND ${e}.max_lat >= ${box.minLat} AND ${e}.min_lat <= ${box.maxLat}`;
};

/**
 * The CTEs `parts` (every circle's box parts in ladder order; the cap's circle is
 * the last step), `ladder` (their boxes), `octave` (the first step whose circle
 * holds a page beyond the start, or the cap's), `narrow` (the ring between that
 * circle and the step below halved again and again: a row that takes the half
 * holding the page's edge, then a row that counts the circle in its middle; the
 * first count is of the step's own circle, unless it is the cap's, so a circle
 * that is not crowded is read as it is),
 * `found` (the narrowest circle found to hold a page) and `circle` (its rows, one
 * per part, their boxes the step's scaled). Each octave's count reads the bounds
 * of its own row and never looks a step's boxes up: D1 counts every row of a
 * materialized table a statement reads, and a lookup without an index reads them
 * all. The ladder is read in the order written, the first row that holds
 * stopping the search; CASE keeps the other rows from being counted. An octave's
 * circle split into two boxes counts each alone, so one whose page is split may
 * be passed over for the next: a larger circle, as right. Narrowing counts a
 * circle's parts together, and stops at the first circle holding a page and
 * fewer than `CROWDED` pages.
 */
function probe({ accountId, near, bbox, bound, take }: NearestOptions, { from, radii }: Ladder): SQL {
  const capStep = literal(radii.length - 1);
  const cosine = entryCosineSql(near, "entry");
  // A first page counts from the point itself; a later one beyond its start.
  const beyond = bound ? sql`${cosine} < ${literal(angleCosine(from + INDEX_ERROR))} AND ` : sql``;
  const holds = sql`(SELECT count(*) FROM (SELECT 1 FROM pinpoints_rtree AS entry WHERE ${rtreeWithin(accountId, boundsOf("box"), "entry")} AND ${beyond}${cosine} >= box.within LIMIT ${literal(take)})) >= ${literal(take)}`;
  const [page, crowd] = [literal(take), literal(CROWDED * take)];
  const ring = scaled(near, sql`ring.radius`, sql`ring.radius / part.radius`);
  const count = sql`(SELECT count(*) FROM (SELECT 1 FROM (SELECT (lo + hi) / 2.0 AS radius) AS ring CROSS JOIN parts AS part CROSS JOIN pinpoints_rtree AS entry
      WHERE part.step = (SELECT step FROM octave) AND ${rtreeWithin(accountId, ring, "entry")} AND ${beyond}${cosine} >= ${ring.within} LIMIT ${crowd}))`;
  const stepRadius = (step: SQL) => sql`(SELECT max(radius) FROM parts WHERE parts.step = ${step})`;
  return sql`parts(step, radius, lon_center, lon_half, lat_half, clip_min_lon, clip_max_lon, clip_min_lat, clip_max_lat) AS MATERIALIZED (VALUES ${partRows(radii, near, bbox)}),
    ladder AS MATERIALIZED (SELECT step, ${scaledBox(near, sql`radius`, sql`1`)} FROM parts),
    octave(step) AS MATERIALIZED (SELECT coalesce((SELECT step FROM ladder AS box WHERE CASE WHEN step < ${capStep} THEN ${holds} ELSE 0 END LIMIT 1), ${capStep})),
    narrow(halving, counted, lo, hi, n) AS (
      SELECT 0, 0, lo, CASE WHEN step = ${capStep} THEN hi ELSE 2 * hi - lo END, NULL FROM (SELECT step,
        coalesce(${stepRadius(sql`octave.step - 1`)}, ${literal(from)}) AS lo, ${stepRadius(sql`octave.step`)} AS hi FROM octave)
      UNION ALL
      SELECT halving + counted, 1 - counted,
        CASE WHEN counted AND n < ${page} THEN (lo + hi) / 2.0 ELSE lo END, CASE WHEN counted AND n >= ${page} THEN (lo + hi) / 2.0 ELSE hi END,
        CASE WHEN NOT counted THEN ${count} END
      FROM narrow WHERE (NOT counted OR n < ${page} OR n >= ${crowd}) AND halving < ${literal(HALVINGS)}),
    found(radius) AS MATERIALIZED (SELECT CASE WHEN counted AND n >= ${page} THEN (lo + hi) / 2.0 ELSE hi END FROM narrow ORDER BY halving DESC, counted DESC LIMIT 1),
    circle AS MATERIALIZED (SELECT found.radius AS radius, ${scaledBox(near, sql`found.radius`, sql`found.radius * 1.0 / part.radius`)}
      FROM found CROSS JOIN parts AS part WHERE part.step = (SELECT step FROM octave))`;
}

/**
 * One statement: the probe, then its circle's rows of the table of boxes (a
 * circle split at the antimeridian has two), whose bounds the R*Tree reads; only
 * the entries inside the circle are looked up, which matters where the box is a
 * band around a pole. SQLite computes the probe once, before the read.
 */
function probedPage(options: NearestOptions, ladder: Ladder, page: (within: Within) => SQL): SQL {
  const { accountId } = options;
  return sql`WITH ${probe(options, ladder)}
    ${page({
      tables: sql`circle CROSS JOIN `,
      ids: sql`SELECT id FROM pinpoints_rtree AS entry WHERE ${rtreeWithin(accountId, boundsOf("circle"), "entry")} AND ${entryCosineSql(options.near, "entry")} >= circle.reach`,
      radius: sql`circle.radius`,
      level: sql`circle.radius`,
    })}`;
}
