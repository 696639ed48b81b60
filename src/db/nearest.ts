/**
 * Nearest first without reading the whole account: the page is read within a
 * circle around the point, the smallest of a ladder of circles that holds it,
 * grown fourfold until the page is full (or the circle is the radius asked
 * for). A page of rows all within the circle is the right page, since every
 * row outside it is farther.
 *
 * The circle comes from a probe that counts, capped at a page, the account's
 * index entries inside each circle of the ladder and beyond the page's start
 * (the distance the cursor resumes from): the ladder's radii are that start
 * plus 125 m (`firstStep`), twice that, … over 17 octaves, then the quarter
 * octaves below the first that holds a page. The probe measures the circle itself (by
 * the distance of the index's own coordinates), not the boxes around it, so a
 * circle holds what the probe counted wherever it lies: near a pole, where the
 * boxes are latitude bands around every longitude, as on the equator. And it
 * counts what lies beyond the start, so a later page reads the ring it needs,
 * not a circle as wide as the first page's around an empty centre (a point
 * at the North Pole, whose nearest places are two thousand kilometres off).
 * The quarter octaves bound the rows a page reads where the places are few
 * near the point and many a little farther. Probe and read are one
 * statement: the probe's answer picks, inside SQLite, the circle whose
 * radius and boxes the read uses.
 */
import { sql, type SQL } from "drizzle-orm";
import {
  circleRects,
  haversine,
  haversineSql,
  HALF_CIRCUMFERENCE,
  intersect,
  rects,
  rtreeIds,
  widen,
  type BBox,
  type Point,
} from "./geo";
import type { Bound } from "./keyset";
import { rawRows } from "./raw-rows";

/** Quarter octaves: the ladder's steps, 17 octaves from the first. */
const STEPS_PER_OCTAVE = 4;
const STEPS = Array.from({ length: 17 * STEPS_PER_OCTAVE + 1 }, (_, i) => 2 ** (i / STEPS_PER_OCTAVE));
/**
 * The first step: 125 m, or a 64th of the distance a later page starts from. Every
 * circle beyond the start holds the rows before it too, which each count reads
 * again; starting near the ring a later page needs spares the counts that find nothing.
 */
const firstStep = (from: number) => Math.max(125, from / 64);

/**
 * How far the index's 32-bit coordinates (rounded outward, src/db/geo.ts) may put a
 * place from where it is, in metres: 1.5e-5° of longitude and 7.6e-6° of latitude at
 * most, under 3 m together. The probe counts a place only when it is this far inside
 * the ring, so every place it counts lies in the circle the read uses.
 */
const INDEX_ERROR = 5;

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
  const radii = STEPS.map((step) => from + firstStep(from) * step).filter((r) => r < cap);
  // The circle each answer of the probe reads: step i the ladder's, past the last (no circle holds a page) `cap`.
  const radiusOf = (step: number) => radii[step] ?? cap;
  const ladder = { from, radii, radiusOf };
  let rows = await rawRows(d1, probedPage(options, ladder, page));
  if (rows.length >= take) return rows;
  // Short (filters the probe does not apply): grow from the circle read, asking the probe again if no row told it.
  const step = rows.length
    ? Number(rows[0]!.search_level)
    : Number((await rawRows(d1, sql`WITH ${probe(options, ladder)} SELECT step FROM probe`))[0]!.step);
  let radius = radiusOf(step);
  while (rows.length < take && radius < cap) {
    radius = Math.min(cap, radius * 4);
    rows = await read(radius);
  }
  return rows;
}

type Ladder = { from: number; radii: number[]; radiusOf: (step: number) => number };

/**
 * VALUES rows `(step, radius, within, min_lon, max_lon, min_lat, max_lat)`, one per box (a
 * row no entry overlaps if none); `within` is the haversine a place the probe counts may
 * reach.
 */
function boxRows(steps: { step: number; radius: number }[], near: Point, bbox: BBox | undefined): SQL {
  const rows = steps.flatMap(({ step, radius }) =>
    searchRects(near, radius, bbox).map((r) => {
      const bounds = [widen(r.minLon, -1), widen(r.maxLon, 1), widen(r.minLat, -1), widen(r.maxLat, 1)];
      return `(${[step, radius, haversine(radius - INDEX_ERROR), ...bounds].join(", ")})`;
    }),
  );
  return sql.raw(rows.length ? rows.join(", ") : "(-2, 0, 0, 1000, 1000, 1000, 1000)");
}

/** R*Tree bounds of the index table `entry` from the columns of the box table row `box`. */
const rtreeWithin = (accountId: number, box: string, entry = "pinpoints_rtree") => {
  const [account, b, e] = [literal(Math.trunc(accountId)), sql.raw(box), sql.raw(entry)];
  return sql`${e}.min_account <= ${account} AND ${e}.max_account >= ${account} AND ${e}.max_lon >= ${b}.min_lon AND ${e}.min_lon <= ${b}.max_lon AND ${e}.max_lat >= ${b}.min_lat AND ${e}.min_lat <= ${b}.max_lat`;
};

/**
 * The CTEs `boxes` (every circle's boxes in ladder order; the cap's circle is step
 * `radii.length`), `octave` (the first whole-octave step whose circle holds a page
 * beyond the start, or the cap's), `probe` (the first of the three steps below that
 * one that holds a page, or that one) and `circle`, its boxes. Each count reads the
 * bounds of its own row and never looks a step's boxes up: D1 counts every row of a
 * materialized table a statement reads, and a lookup without an index reads them
 * all. `boxes` is read in the order written, the first row that holds stopping the
 * search; CASE keeps the other rows from being counted. A circle split into two
 * boxes counts each alone, so one whose page is split may be passed over for the
 * next: a larger circle, as right.
 */
function probe({ accountId, near, bbox, take }: NearestOptions, { from, radii, radiusOf }: Ladder): SQL {
  const capStep = literal(radii.length);
  const steps = [...radii.keys(), radii.length].map((step) => ({ step, radius: radiusOf(step) }));
  const h = haversineSql(near, sql`(entry.min_lat + entry.max_lat) / 2`, sql`(entry.min_lon + entry.max_lon) / 2`);
  const holds = sql`(SELECT count(*) FROM (SELECT 1 FROM pinpoints_rtree AS entry WHERE ${rtreeWithin(accountId, "box", "entry")} AND ${h} > ${literal(haversine(from + INDEX_ERROR))} AND ${h} <= box.within LIMIT ${literal(take)})) >= ${literal(take)}`;
  const octave = literal(STEPS_PER_OCTAVE);
  return sql`boxes(step, radius, within, min_lon, max_lon, min_lat, max_lat) AS MATERIALIZED (VALUES ${boxRows(steps, near, bbox)}),
    octave(step) AS MATERIALIZED (SELECT coalesce((SELECT step FROM boxes AS box WHERE CASE WHEN step % ${octave} = 0 AND step < ${capStep} THEN ${holds} ELSE 0 END LIMIT 1), ${capStep})),
    probe(step) AS MATERIALIZED (SELECT coalesce((SELECT step FROM boxes AS box WHERE CASE WHEN step > (SELECT step FROM octave) - ${octave} AND step < (SELECT step FROM octave) THEN ${holds} ELSE 0 END LIMIT 1), (SELECT step FROM octave))),
    circle AS MATERIALIZED (SELECT * FROM boxes WHERE step = (SELECT step FROM probe))`;
}

/**
 * One statement: the probe, then its circle's rows of the table of boxes (a
 * circle split at the antimeridian has two), whose bounds the R*Tree reads.
 * SQLite computes the probe once, before the read.
 */
function probedPage(options: NearestOptions, ladder: Ladder, page: (within: Within) => SQL): SQL {
  const { accountId } = options;
  return sql`WITH ${probe(options, ladder)}
    ${page({
      tables: sql`circle CROSS JOIN `,
      ids: sql`SELECT id FROM pinpoints_rtree WHERE ${rtreeWithin(accountId, "circle")}`,
      radius: sql`circle.radius`,
      level: sql`circle.step`,
    })}`;
}
