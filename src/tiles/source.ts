/**
 * What a tile reads, at a cost that does not grow with the account.
 *
 * A tile below the clustering zoom (TILE_CLUSTER_MAXZOOM, 16 by default)
 * without filters reads the precomputed cells of its scope (src/db/search/tile-cells.ts):
 * at most 256 rows and one pinpoint per bin of one place, at any zoom and for
 * any number of places. The scope is the caller's account, the list of
 * `list=`, or what a publishable key shows: every list (the account's listed
 * places) or its one list.
 *
 * Everything else reads places: from the clustering zoom on, where every place
 * is its own feature, and for the filters no cell can hold (`category`,
 * `tags`, `q`, `updated_since`, a key of several lists). The candidates come
 * from whichever index proposes at most MAX_TILE_ROWS of them: the R*Tree's
 * entries in the tile, the full-text matches of `q`, or the members of the list
 * or the key's lists; each is checked exactly against every filter and the tile.
 * Every candidate counted is the caller's own (the R*Tree's entries of the
 * account, its matches of `q`, the members of its lists): the full-text index
 * holds every account's text, and a count over it would let another account's
 * words decide between a tile and a 422.
 * When none does, a tile at the clustering zoom or beyond without filters is
 * drawn from the finest cells (clusters, exact counts), and a filtered one is
 * refused with a 422 that says to zoom in or narrow the filters: never an
 * inexact count, never an unbounded read.
 */
import { sql, type SQL } from "drizzle-orm";
import { ApiError } from "../core/problem";
import { rects, rtreeIds } from "../db/search/geo";
import { rawRows } from "../db/search/raw-rows";
import { and } from "../db/search/search-sql";
import { accountMatchingIds } from "../db/search/text-search";
import { assertTextIndexComplete } from "../db/search/text-index";
import {
  ACCOUNT_SCOPE,
  binsFromCells,
  cellLevelFor,
  FINEST_LEVEL,
  LISTED_SCOPE,
  quantizedXSql,
  quantizedYSql,
  tagsText,
  type Bin,
  type BinPlace,
  type TileScope,
} from "../db/search/tile-cells";
import { searchConditions, type PinpointSearch } from "../pinpoints/search";
import { BIN_BITS, cellOf, tileBox, type Tile } from "./grid";
import { QUANTIZED_BITS } from "../db/search/tile-cells";

/** The most candidate rows a tile reads; past it, the cells answer or the tile is refused. */
export const MAX_TILE_ROWS = 10_000;

/** The filters of a tile request, as GET /v3.0/pinpoints has them. */
export type TileFilters = Pick<PinpointSearch, "list" | "category" | "tags" | "q" | "updatedSince">;

/** Whose places: the account, with the list filter and the key's lists already checked by the caller. */
export type TileReader = {
  accountId: number;
  /** A publishable key's lists (null: every list); undefined for an access token. */
  published?: readonly number[] | null;
};

/** A place with its quantized position. */
export type TilePlace = BinPlace & { qx: number; qy: number };

/** Clustered bins at `binLevel`, or every place on its own. */
export type TileContent = { kind: "bins"; binLevel: number; bins: Bin[] } | { kind: "places"; places: TilePlace[] };

/** The cells that hold exactly what `reader` sees with `filters`, when some do. */
export function cellScope(reader: TileReader, filters: TileFilters): TileScope | undefined {
  const { category, tags, q, updatedSince, list } = filters;
  if (category !== undefined || tags !== undefined || q !== undefined || updatedSince !== undefined) return undefined;
  const { accountId, published } = reader;
  if (list !== undefined) return { accountId, listId: list };
  if (published === undefined) return { accountId, listId: ACCOUNT_SCOPE };
  if (published === null) return { accountId, listId: LISTED_SCOPE };
  return published.length === 1 ? { accountId, listId: published[0]! } : undefined;
}

export async function tileContent(
  d1: D1Database,
  reader: TileReader,
  filters: TileFilters,
  tile: Tile,
  clusterMaxZoom: number,
): Promise<TileContent> {
  if (filters.q) await assertTextIndexComplete(d1);
  const scope = cellScope(reader, filters);
  const binLevel = tile.z + BIN_BITS;
  const clustered = tile.z < clusterMaxZoom;
  const level = cellLevelFor(binLevel);
  if (clustered && scope && level !== undefined) {
    return { kind: "bins", binLevel, bins: await binsFromCells(d1, scope, tile, level, binLevel) };
  }
  const places = await placesInTile(d1, reader, filters, tile);
  if (places)
    return clustered ? { kind: "bins", binLevel, bins: binPlaces(places, binLevel) } : { kind: "places", places };
  if (scope && tile.z <= FINEST_LEVEL) {
    const finest = Math.min(binLevel, FINEST_LEVEL);
    return { kind: "bins", binLevel: finest, bins: await binsFromCells(d1, scope, tile, FINEST_LEVEL, finest) };
  }
  throw new ApiError(
    "tile_too_dense",
    `More than ${MAX_TILE_ROWS} places around this tile may match its filters, too many to count exactly in one request: zoom in, or narrow the filters.`,
  );
}

/** The places in bins of `binLevel`, as the cells would sum them. */
export function binPlaces(places: readonly TilePlace[], binLevel: number): Bin[] {
  const bins = new Map<number, Bin>();
  for (const place of places) {
    const key = cellOf(place.qx, place.qy, binLevel);
    const bin = bins.get(key);
    if (!bin) bins.set(key, { key, places: 1, sumX: place.qx, sumY: place.qy, sumId: place.id, place });
    else {
      bin.places++;
      bin.sumX += place.qx;
      bin.sumY += place.qy;
      bin.sumId += place.id;
      bin.place = undefined;
    }
  }
  return [...bins.values()].sort((a, b) => a.key - b.key);
}

const lit = (n: number) => sql.raw(String(Math.trunc(n)));

/**
 * Every place of the tile matching the filters, in id order, read through the
 * first index that proposes at most MAX_TILE_ROWS candidates; undefined when none does.
 */
async function placesInTile(
  d1: D1Database,
  reader: TileReader,
  filters: TileFilters,
  tile: Tile,
): Promise<TilePlace[] | undefined> {
  const { accountId } = reader;
  const search: PinpointSearch = { ...filters, within: filters.list === undefined ? reader.published : undefined };
  const drivers: SQL[] = [rtreeIds(accountId, rects(tileBox(tile)))];
  if (filters.q) drivers.push(accountMatchingIds("pinpoints_fts", "pinpoints", accountId, filters.q));
  const lists = filters.list !== undefined ? [filters.list] : (search.within ?? undefined);
  // The list of `list=` and a key's lists were checked to be the account's, and so are their members.
  if (lists) {
    drivers.push(
      sql`SELECT pinpoint_id FROM list_pinpoints WHERE list_id IN (SELECT value FROM json_each(${JSON.stringify(lists)}))`,
    );
  }
  const cap = lit(MAX_TILE_ROWS + 1);
  const [counts] = await rawRows(
    d1,
    sql`SELECT ${sql.join(
      drivers.map((ids, i) => sql`(SELECT count(*) FROM (SELECT 1 FROM (${ids}) LIMIT ${cap})) AS ${sql.raw(`d${i}`)}`),
      sql`, `,
    )}`,
  );
  const driver = drivers.findIndex((_, i) => Number(counts![`d${i}`]) <= MAX_TILE_ROWS);
  if (driver < 0) return undefined;
  const qx = quantizedXSql(sql`pinpoints.longitude`);
  const qy = quantizedYSql(sql`pinpoints.latitude`);
  const shift = lit(QUANTIZED_BITS - tile.z);
  const rows = await rawRows(
    d1,
    sql`SELECT * FROM (SELECT pinpoints.id, pinpoints.name, pinpoints.category_id, pinpoints.tags, pinpoints.latitude, pinpoints.longitude, ${qx} AS qx, ${qy} AS qy
      FROM pinpoints WHERE pinpoints.id IN (${drivers[driver]!}) AND ${and(searchConditions(accountId, search))})
      WHERE (qx >> ${shift}) = ${lit(tile.x)} AND (qy >> ${shift}) = ${lit(tile.y)} ORDER BY id`,
  );
  return rows.map((r) => ({
    id: Number(r.id),
    name: String(r.name),
    category: r.category_id === null ? null : Number(r.category_id),
    tags: tagsText(r.tags),
    latitude: Number(r.latitude),
    longitude: Number(r.longitude),
    qx: Number(r.qx),
    qy: Number(r.qy),
  }));
}
