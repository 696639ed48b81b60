/**
 * The precomputed counts behind vector tiles (migrations/0011_tile_cells.sql):
 * for every scope (an account's pinpoints, one list's, the account's listed
 * ones) and each level of a ladder of web-mercator grids, the number of
 * places in each cell with the sums of their quantized positions and of their
 * ids, kept exact by triggers in every write's own transaction.
 *
 * Positions are quantized to 32-bit integers once, by the SQL below, which is
 * the migration's own text: the triggers, the rows a tile reads directly
 * (src/tiles/) and the cells agree to the last bit on which tile and cell a
 * place is in. The same formulas in JavaScript (`quantizeX`, `quantizeY`)
 * serve the tests and the tile math; they use the same IEEE operations.
 */
import { sql, type SQL } from "drizzle-orm";
import { rawRows } from "./raw-rows";

/** The levels the cells are kept at: a tile at zoom z reads level z + 3 or z + 4 (at most 256 cells). */
export const TILE_LEVELS = [4, 6, 8, 10, 12, 14, 16, 18] as const;
export const FINEST_LEVEL = TILE_LEVELS[TILE_LEVELS.length - 1]!;
/** Bits of a quantized coordinate: a cell at level l is its top l bits on each axis. */
export const QUANTIZED_BITS = 32;
const SCALE = 2 ** QUANTIZED_BITS;
/** The latitude at which web mercator's square map ends (atan(sinh(π)) in degrees); beyond it places sit on the edge. */
export const MERCATOR_LIMIT = 85.0511287798066;
const DEGREE = 0.017453292519943295;
const FOUR_PI = 12.566370614359172;

/** `floor((lon + 180) / 360 * 2^32)`, the last column for 180. */
export function quantizeX(longitude: number): number {
  return Math.min(SCALE - 1, Math.trunc(((longitude + 180) / 360) * SCALE));
}

/** Web mercator's y (0 at the top) times 2^32, latitudes clamped to the square map. */
export function quantizeY(latitude: number): number {
  const clamped = Math.max(-MERCATOR_LIMIT, Math.min(MERCATOR_LIMIT, latitude));
  const s = Math.sin(clamped * DEGREE);
  return Math.min(SCALE - 1, Math.max(0, Math.trunc((0.5 - Math.log((1 + s) / (1 - s)) / FOUR_PI) * SCALE)));
}

/** SQL of `quantizeX` over a column, as the triggers write it. */
export const quantizedXSql = (longitude: SQL): SQL =>
  sql`min(4294967295, cast((${longitude} + 180.0) / 360.0 * 4294967296.0 AS integer))`;

/** SQL of `quantizeY` over a column, as the triggers write it. */
export function quantizedYSql(latitude: SQL): SQL {
  const clamped = sql`max(-85.0511287798066, min(85.0511287798066, ${latitude}))`;
  const sin = sql`sin(${clamped} * 0.017453292519943295)`;
  return sql`min(4294967295, max(0, cast((0.5 - ln((1.0 + ${sin}) / (1.0 - ${sin})) / 12.566370614359172) * 4294967296.0 AS integer)))`;
}

/**
 * Whose places a scope counts: `0` every pinpoint of the account, `-1` those
 * in at least one of its lists, a list id that list's members.
 */
export type TileScope = { accountId: number; listId: number };
export const ACCOUNT_SCOPE = 0;
export const LISTED_SCOPE = -1;

/** A bin of a tile: places, the sums of their quantized positions and ids; the place itself when it is one. */
export type Bin = {
  key: number;
  places: number;
  sumX: number;
  sumY: number;
  sumId: number;
  place?: BinPlace;
};
export type BinPlace = {
  id: number;
  name: string;
  category: number | null;
  tags: string;
  latitude: number;
  longitude: number;
};

/** The ladder level a tile at `zoom` reads so that each of its bins at `binLevel` holds whole cells. */
export function cellLevelFor(binLevel: number): number | undefined {
  return TILE_LEVELS.find((level) => level >= binLevel);
}

/**
 * The bins of a tile from the cells of `scope` at `level` inside it: the
 * cells whose row `y >> (level - z)` and column are the tile's, summed per bin
 * (the cells at `binLevel`, which the tile's level `z` and `level` bracket),
 * each bin of one place with that place's attributes. One statement; it reads
 * at most 4^(level - z) cells and one pinpoint per bin.
 */
export async function binsFromCells(
  d1: D1Database,
  scope: TileScope,
  tile: { z: number; x: number; y: number },
  level: number,
  binLevel: number,
): Promise<Bin[]> {
  const span = level - tile.z;
  const shift = level - binLevel;
  const width = 2 ** span;
  const ranges: [number, number][] = [];
  for (let row = tile.y * width; row < (tile.y + 1) * width; row++) {
    const start = row * 2 ** level + tile.x * width;
    ranges.push([start, start + width - 1]);
  }
  const lit = (n: number) => sql.raw(String(n));
  // Row-major: the row is cell >> level, the column cell & (2^level - 1); both shift down to the bin's.
  const bin = sql`(((cell >> ${lit(level)}) >> ${lit(shift)}) << ${lit(binLevel)}) | ((cell & ${lit(2 ** level - 1)}) >> ${lit(shift)})`;
  const rows = await rawRows(
    d1,
    sql`SELECT b.bin, b.places, b.sum_x, b.sum_y, b.sum_id, p.name, p.category_id, p.tags, p.latitude, p.longitude
      FROM (SELECT ${bin} AS bin, sum(places) AS places, sum(sum_x) AS sum_x, sum(sum_y) AS sum_y, sum(sum_id) AS sum_id
        FROM json_each(${JSON.stringify(ranges)}) AS r CROSS JOIN tile_cells
        WHERE tile_cells.account_id = ${scope.accountId} AND tile_cells.list_id = ${scope.listId}
          AND tile_cells.level = ${lit(level)} AND tile_cells.cell BETWEEN r.value ->> 0 AND r.value ->> 1
        GROUP BY 1) AS b
      LEFT JOIN pinpoints AS p ON b.places = 1 AND p.id = b.sum_id`,
  );
  return rows.map((r) => ({
    key: Number(r.bin),
    places: Number(r.places),
    sumX: Number(r.sum_x),
    sumY: Number(r.sum_y),
    sumId: Number(r.sum_id),
    place:
      r.name === null || r.name === undefined
        ? undefined
        : {
            id: Number(r.sum_id),
            name: String(r.name),
            category: r.category_id === null ? null : Number(r.category_id),
            tags: tagsText(r.tags),
            latitude: Number(r.latitude),
            longitude: Number(r.longitude),
          },
  }));
}

/** A pinpoint's tags (a JSON array) as the comma-separated text tiles carry. */
export function tagsText(tags: unknown): string {
  const list = typeof tags === "string" ? (JSON.parse(tags) as unknown) : tags;
  return Array.isArray(list) ? list.map(String).join(",") : "";
}

/** At most this many occupied cells are read to find a scope's extent. */
const EXTENT_CELLS = 1024;

/**
 * The extent of a scope's places as the cells of the finest level at which
 * it occupies at most EXTENT_CELLS cells (null when it has none): `[minX,
 * minY, maxX, maxY]` in cells of `level`. At most one capped count per level
 * and one read of EXTENT_CELLS cells, whatever the scope's size.
 */
export async function scopeExtent(
  d1: D1Database,
  scope: TileScope,
): Promise<{ level: number; cells: [number, number, number, number] } | null> {
  // One row of capped counts, a column per level (D1 allows few terms in a compound SELECT).
  const counts = sql.join(
    TILE_LEVELS.map(
      (level) =>
        sql`(SELECT count(*) FROM (SELECT 1 FROM tile_cells WHERE account_id = ${scope.accountId} AND list_id = ${scope.listId} AND level = ${sql.raw(String(level))} LIMIT ${sql.raw(String(EXTENT_CELLS + 1))})) AS ${sql.raw(`l${level}`)}`,
    ),
    sql`, `,
  );
  const [occupied] = await rawRows(d1, sql`SELECT ${counts}`);
  const fits = TILE_LEVELS.map((level) => ({ level, cells: Number(occupied![`l${level}`]) })).filter(
    (r) => r.cells > 0 && r.cells <= EXTENT_CELLS,
  );
  if (fits.length === 0) return null;
  const level = Math.max(...fits.map((r) => Number(r.level)));
  const [row] = await rawRows(
    d1,
    sql`SELECT min(cell & ${sql.raw(String(2 ** level - 1))}) AS min_x, max(cell & ${sql.raw(String(2 ** level - 1))}) AS max_x,
      min(cell >> ${sql.raw(String(level))}) AS min_y, max(cell >> ${sql.raw(String(level))}) AS max_y
      FROM tile_cells WHERE account_id = ${scope.accountId} AND list_id = ${scope.listId} AND level = ${sql.raw(String(level))}`,
  );
  return { level, cells: [Number(row!.min_x), Number(row!.min_y), Number(row!.max_x), Number(row!.max_y)] };
}
