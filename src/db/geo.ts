/**
 * Geometry for the map queries: great-circle distance on a sphere and the
 * longitude/latitude boxes that contain a circle, as SQL over the
 * `pinpoints_rtree` index (migrations/0004_query_indexes.sql).
 *
 * The sphere's radius is the Earth's mean radius (IUGG, 6,371,008.8 m), as in
 * most geodesy libraries: against the WGS 84 ellipsoid its distances are off by
 * -0.45% to +0.56% (README "Map queries"), less than with the equatorial radius
 * (-0.34% to +0.67%). Half its circumference, 20,015,114 m, is the largest
 * `radius` accepted.
 * The index holds 32-bit floats rounded outward, so it only proposes
 * candidates; every answer is re-checked against the exact columns.
 */
import { sql, type SQL } from "drizzle-orm";

export const EARTH_RADIUS = 6_371_008.8;
export const HALF_CIRCUMFERENCE = Math.PI * EARTH_RADIUS;

export type Point = { latitude: number; longitude: number };
/** Degrees, inclusive; `minLon > maxLon` crosses the antimeridian. */
export type BBox = { minLon: number; minLat: number; maxLon: number; maxLat: number };
/** A box that does not cross the antimeridian. */
type Rect = BBox;

const rad = (degrees: number) => (degrees * Math.PI) / 180;
const deg = (radians: number) => (radians * 180) / Math.PI;

/** Great-circle distance in metres (haversine), the same formula as `distanceSql`. */
export function distance(a: Point, b: Point): number {
  const h =
    Math.sin((rad(b.latitude) - rad(a.latitude)) / 2) ** 2 +
    Math.cos(rad(a.latitude)) * Math.cos(rad(b.latitude)) * Math.sin((rad(b.longitude) - rad(a.longitude)) / 2) ** 2;
  return 2 * EARTH_RADIUS * Math.asin(Math.min(1, Math.sqrt(h)));
}

/** SQL of the haversine of the angle from `from` to (`latitude`, `longitude`), numbers bound or written by `value`. */
function haversineTerm(from: Point, latitude: unknown, longitude: unknown, value: (n: number) => SQL): SQL {
  // D1 refuses power(); a square is a product.
  const halfLat = sql`sin((radians(${latitude}) - ${value(rad(from.latitude))}) / 2)`;
  const halfLon = sql`sin((radians(${longitude}) - ${value(rad(from.longitude))}) / 2)`;
  return sql`${halfLat} * ${halfLat} + ${value(Math.cos(rad(from.latitude)))} * cos(radians(${latitude})) * ${halfLon} * ${halfLon}`;
}

/** SQL for the distance in metres from `from` to the row at (`latitude`, `longitude`). */
export function distanceSql(from: Point, latitude: SQL | unknown, longitude: SQL | unknown): SQL {
  const h = haversineTerm(from, latitude, longitude, (n) => sql`${n}`);
  return sql`(${2 * EARTH_RADIUS} * asin(min(1, sqrt(${h}))))`;
}

/**
 * SQL for the haversine of the distance (`haversine`), which grows with it: a
 * cheaper comparison than the distance for a statement that makes many. The
 * numbers are written into the SQL text, as such a statement would pass D1's
 * 100 bound parameters.
 */
export const haversineSql = (from: Point, latitude: SQL, longitude: SQL): SQL =>
  haversineTerm(from, latitude, longitude, (n) => sql.raw(String(n)));

/** The haversine of `metres` along the sphere (up to half its circumference): what `haversineSql` compares with. */
export const haversine = (metres: number) => Math.sin(Math.min(metres, HALF_CIRCUMFERENCE) / (2 * EARTH_RADIUS)) ** 2;

/** The one or two boxes (split at the antimeridian) that make up `box`. */
export function rects(box: BBox): Rect[] {
  return box.minLon <= box.maxLon
    ? [box]
    : [
        { ...box, maxLon: 180 },
        { ...box, minLon: -180 },
      ];
}

/** Whether `box` holds the point, edges included. */
export function contains(box: BBox, p: Point): boolean {
  return (
    p.latitude >= box.minLat &&
    p.latitude <= box.maxLat &&
    (box.minLon <= box.maxLon
      ? p.longitude >= box.minLon && p.longitude <= box.maxLon
      : p.longitude >= box.minLon || p.longitude <= box.maxLon)
  );
}

/**
 * The boxes holding every point within `metres` of `center` (Matuschek's bounding
 * coordinates): the full longitude range when the circle covers a pole.
 */
export function circleRects(center: Point, metres: number): Rect[] {
  const angle = metres / EARTH_RADIUS;
  const lat = rad(center.latitude);
  const minLat = deg(lat - angle);
  const maxLat = deg(lat + angle);
  if (minLat <= -90 || maxLat >= 90 || Math.sin(angle) >= Math.cos(lat)) {
    return [{ minLon: -180, maxLon: 180, minLat: Math.max(minLat, -90), maxLat: Math.min(maxLat, 90) }];
  }
  const dLon = deg(Math.asin(Math.sin(angle) / Math.cos(lat)));
  const minLon = center.longitude - dLon;
  const maxLon = center.longitude + dLon;
  if (minLon < -180) return rects({ minLon: minLon + 360, maxLon, minLat, maxLat });
  if (maxLon > 180) return rects({ minLon, maxLon: maxLon - 360, minLat, maxLat });
  return [{ minLon, maxLon, minLat, maxLat }];
}

/** The intersection of two boxes, or null; each may be split at the antimeridian. */
export function intersect(a: Rect[], b: Rect[]): Rect[] {
  const out: Rect[] = [];
  for (const x of a) {
    for (const y of b) {
      const r = {
        minLon: Math.max(x.minLon, y.minLon),
        maxLon: Math.min(x.maxLon, y.maxLon),
        minLat: Math.max(x.minLat, y.minLat),
        maxLat: Math.min(x.maxLat, y.maxLat),
      };
      if (r.minLon <= r.maxLon && r.minLat <= r.maxLat) out.push(r);
    }
  }
  return out;
}

/**
 * A number written into the SQL text: a page's probe names dozens of boxes, more
 * than D1's 100 bound parameters. Widened by a hair, as parsing the literal may
 * round differently; these bounds only select candidates.
 */
export const widen = (n: number, direction: -1 | 1) => n + direction * 1e-9 * Math.max(1, Math.abs(n));
const literal = (n: number, direction: -1 | 1) => sql.raw(String(widen(n, direction)));

/**
 * SQL selecting the ids of the account's index entries overlapping `boxes`
 * (candidates only: see the module comment). `limit` caps each box's share.
 */
export function rtreeIds(accountId: number, boxes: Rect[], limit?: number): SQL {
  const account = sql.raw(String(Math.trunc(accountId)));
  const parts = boxes.map(
    (r) =>
      sql`SELECT id FROM pinpoints_rtree WHERE min_account <= ${account} AND max_account >= ${account} AND max_lon >= ${literal(r.minLon, -1)} AND min_lon <= ${literal(r.maxLon, 1)} AND max_lat >= ${literal(r.minLat, -1)} AND min_lat <= ${literal(r.maxLat, 1)}${limit === undefined ? sql`` : sql` LIMIT ${sql.raw(String(Math.trunc(limit)))}`}`,
  );
  return sql.join(
    parts.map((p) => (parts.length === 1 ? p : sql`SELECT * FROM (${p})`)),
    sql` UNION ALL `,
  );
}

/** SQL: the exact test of the row's columns against `box`. */
export function inBoxSql(box: BBox, latitude: SQL | unknown, longitude: SQL | unknown): SQL {
  const lon =
    box.minLon <= box.maxLon
      ? sql`${longitude} BETWEEN ${box.minLon} AND ${box.maxLon}`
      : sql`(${longitude} >= ${box.minLon} OR ${longitude} <= ${box.maxLon})`;
  return sql`(${latitude} BETWEEN ${box.minLat} AND ${box.maxLat} AND ${lon})`;
}
