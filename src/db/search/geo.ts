/**
 * Geometry for the map queries: great-circle distance on a sphere and the
 * longitude/latitude boxes that contain a circle, as SQL over the
 * `pinpoints_rtree` index (migrations/0004_query_indexes.sql).
 *
 * The sphere's radius is the Earth's mean radius (IUGG, 6,371,008.8 m), as in
 * most geodesy libraries: against the WGS 84 ellipsoid its distances are off by
 * -0.45% to +0.56% (docs/map-queries.md "The Earth model"), less than with the equatorial radius
 * (-0.34% to +0.67%). Half its circumference, 20,015,114 m, is the largest
 * distance there is: a larger `radius` is taken as that one.
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

/** SQL for the distance in metres from `from` to the row at (`latitude`, `longitude`). */
export function distanceSql(from: Point, latitude: SQL | unknown, longitude: SQL | unknown): SQL {
  const lat = rad(from.latitude);
  // D1 refuses power(); a square is a product.
  const halfLat = sql`sin((radians(${latitude}) - ${lat}) / 2)`;
  const halfLon = sql`sin((radians(${longitude}) - ${rad(from.longitude)}) / 2)`;
  return sql`(${2 * EARTH_RADIUS} * asin(min(1, sqrt(${halfLat} * ${halfLat} + ${Math.cos(lat)} * cos(radians(${latitude})) * ${halfLon} * ${halfLon}))))`;
}

/**
 * SQL for the cosine of the angle from `from` to the centre of the R*Tree entry
 * `entry` (the spherical law of cosines): it falls as the distance grows, and
 * costs three functions to the distance's ten, for a statement that compares
 * many entries with circles (src/db/search/nearest.ts). Near 1 it resolves distances to
 * about a decimetre, finer than the index's own coordinates (a few metres). The
 * numbers are written into the SQL text, as such a statement would pass D1's 100
 * bound parameters.
 */
export function entryCosineSql(from: Point, entry: string): SQL {
  const [e, half] = [sql.raw(entry), sql.raw(String(Math.PI / 360))];
  const lat = sql`((${e}.min_lat + ${e}.max_lat) * ${half})`;
  const [sinLat, cosLat, lon] = [Math.sin(rad(from.latitude)), Math.cos(rad(from.latitude)), rad(from.longitude)];
  return sql`(${sql.raw(String(sinLat))} * sin(${lat}) + ${sql.raw(String(cosLat))} * cos(${lat}) * cos((${e}.min_lon + ${e}.max_lon) * ${half} - ${sql.raw(String(lon))}))`;
}

/** The cosine of the angle `metres` spans on the sphere (up to half its circumference): what `entryCosineSql` compares with. */
export const angleCosine = (metres: number) => Math.cos(Math.min(metres, HALF_CIRCUMFERENCE) / EARTH_RADIUS);

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
 * A circle's box as ranges around its centre: latitudes `latHalf` degrees either
 * side, longitudes `lonCenter ± lonHalf` (both cut to the world by `partRect`). A
 * circle across the antimeridian has a second part whose centre is moved by 360°;
 * one around a pole has one part of every longitude. Halves grow with the circle's
 * radius (`latHalf` in proportion, `lonHalf` less than in proportion), so a part
 * scaled by the ratio of a smaller radius to its own holds the smaller circle's box:
 * what src/db/search/nearest.ts reads its smaller circles by.
 */
export type CirclePart = { lonCenter: number; lonHalf: number; latHalf: number };

/** Longitudes either side enough for every longitude however far down a circle is scaled (src/db/search/nearest.ts). */
const EVERY_LONGITUDE = 1e9;

/** The parts of the box holding every point within `metres` of `center` (Matuschek's bounding coordinates). */
export function circleParts(center: Point, metres: number): CirclePart[] {
  const angle = metres / EARTH_RADIUS;
  const lat = rad(center.latitude);
  const latHalf = deg(angle);
  if (center.latitude - latHalf <= -90 || center.latitude + latHalf >= 90 || Math.sin(angle) >= Math.cos(lat)) {
    return [{ lonCenter: 0, lonHalf: EVERY_LONGITUDE, latHalf }];
  }
  const lonHalf = deg(Math.asin(Math.sin(angle) / Math.cos(lat)));
  const part = { lonCenter: center.longitude, lonHalf, latHalf };
  if (center.longitude - lonHalf < -180) return [part, { ...part, lonCenter: center.longitude + 360 }];
  if (center.longitude + lonHalf > 180) return [part, { ...part, lonCenter: center.longitude - 360 }];
  return [part];
}

/** The box of a circle's part around `center`, within the world. */
export const partRect = (center: Point, { lonCenter, lonHalf, latHalf }: CirclePart): Rect => ({
  minLon: Math.max(-180, lonCenter - lonHalf),
  maxLon: Math.min(180, lonCenter + lonHalf),
  minLat: Math.max(-90, center.latitude - latHalf),
  maxLat: Math.min(90, center.latitude + latHalf),
});

/** The boxes holding every point within `metres` of `center`: the full longitude range when the circle covers a pole. */
export const circleRects = (center: Point, metres: number): Rect[] =>
  circleParts(center, metres).map((part) => partRect(center, part));

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
