/**
 * Nearest first without reading the whole account: the page is read within a
 * circle around the point, the smallest that can hold it, grown fourfold
 * until the page is full (or the circle is the radius asked for). A page of
 * rows all within the circle is the right page, since every row outside it
 * is farther.
 *
 * The first circle comes from one probe query that counts, capped at a page,
 * the account's pinpoints in the boxes around circles of 125 m, 250 m, …
 * 16,384 km, and takes twice the first that holds a page: so a page reads
 * about the same number of rows in a dense city as in an empty ocean.
 */
import { sql } from "drizzle-orm";
import { circleRects, HALF_CIRCUMFERENCE, intersect, rects, rtreeIds, type BBox, type Point } from "./geo";
import type { Bound } from "./keyset";
import { rawRows } from "./raw-rows";

const PROBE_RADII = Array.from({ length: 18 }, (_, i) => 125 * 2 ** i);

/** The boxes to search for a circle, within the bbox filter if there is one. */
export const searchRects = (near: Point, radius: number, bbox: BBox | undefined) =>
  bbox ? intersect(circleRects(near, radius), rects(bbox)) : circleRects(near, radius);

/**
 * Reads a nearest-first page: `page(radius)` reads the rows within `radius`
 * (`HALF_CIRCUMFERENCE` meaning everywhere) in `[distance, id]` order from `bound`.
 */
export async function nearestPage<Row>(
  d1: D1Database,
  options: { accountId: number; near: Point & { radius?: number }; bbox?: BBox; bound: Bound; take: number },
  page: (radius: number) => Promise<Row[]>,
): Promise<Row[]> {
  const { near, bound, take } = options;
  const cap = Math.min(near.radius ?? Infinity, HALF_CIRCUMFERENCE);
  // Backwards, every row of the page is nearer than the bound: one circle holds them all.
  if (bound?.direction === "before") return page(Math.min(cap, Number(bound.key[0])));
  const step = await firstCircle(d1, options, cap);
  let radius = Math.min(cap, (bound ? Number(bound.key[0]) : 0) + step);
  for (;;) {
    const rows = await page(radius);
    if (rows.length >= take || radius >= cap) return rows;
    radius = Math.min(cap, radius * 4);
  }
}

/** Twice the radius of the smallest probe circle whose box holds a page, or `cap`. */
async function firstCircle(
  d1: D1Database,
  { accountId, near, bbox, take }: { accountId: number; near: Point; bbox?: BBox; take: number },
  cap: number,
): Promise<number> {
  const radii = PROBE_RADII.filter((r) => 2 * r < cap);
  if (radii.length === 0) return cap;
  // CASE evaluates its branches in order and stops at the first that holds.
  const branches = radii.map((r, i) => {
    const boxes = searchRects(near, r, bbox);
    const count = boxes.length ? sql`(SELECT count(*) FROM (${rtreeIds(accountId, boxes, take)}))` : sql`0`;
    return sql`WHEN ${count} >= ${sql.raw(String(take))} THEN ${sql.raw(String(i))}`;
  });
  const [row] = await rawRows(d1, sql`SELECT CASE ${sql.join(branches, sql` `)} ELSE -1 END AS level`);
  const level = Number(row!.level);
  return level < 0 ? cap : 2 * radii[level]!;
}
