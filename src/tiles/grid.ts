/**
 * Web mercator XYZ tiles over the quantized positions of src/db/search/tile-cells.ts:
 * which tile and bin a place is in, where inside a tile (extent 4096) it is
 * drawn, and the ids of clusters. Positions are 32-bit integers, so a tile at
 * zoom z is their top z bits and a pixel the next 12: every place is in
 * exactly one tile at each zoom (the right and bottom edges belong to the
 * next tile), and it is drawn inside that tile's extent.
 */
import type { BBox } from "../db/search/geo";
import { MERCATOR_LIMIT, QUANTIZED_BITS } from "../db/search/tile-cells";

export type Tile = { z: number; x: number; y: number };

export const MAX_ZOOM = 22;
/** Units across a tile (MVT 2.1's default). */
export const EXTENT = 4096;
const EXTENT_BITS = 12;
/** A tile is cut into 2^BIN_BITS × 2^BIN_BITS bins (512 units: 64 pixels of a 512-pixel tile) for clustering. */
export const BIN_BITS = 3;
const SCALE = 2 ** QUANTIZED_BITS;

/** The tile at zoom `z` holding quantized position `q` (on either axis). */
export const tileOf = (q: number, z: number) => Math.floor(q / 2 ** (QUANTIZED_BITS - z));

/** The cell at `level` holding (qx, qy), row-major as the cells store it. */
export const cellOf = (qx: number, qy: number, level: number) => tileOf(qy, level) * 2 ** level + tileOf(qx, level);

/** Where quantized position `q` (possibly fractional, a centroid) is drawn in tile coordinate `t` at zoom `z`. */
export function pixel(q: number, z: number, t: number): number {
  const units = Math.floor(q * 2 ** (z + EXTENT_BITS - QUANTIZED_BITS)) - t * EXTENT;
  return Math.min(EXTENT - 1, Math.max(0, units));
}

/** Longitude of a quantized x. */
export const longitudeOf = (qx: number) => (qx / SCALE) * 360 - 180;

/** Latitude of a quantized y (inverse web mercator). */
export const latitudeOf = (qy: number) => (Math.atan(Math.sinh(Math.PI * (1 - (2 * qy) / SCALE))) * 180) / Math.PI;

/**
 * A box holding every place of the tile, for the R*Tree to propose
 * candidates: the tile's edges widened a little (the exact test is on the
 * quantized positions), and to the pole for the top and bottom rows, whose
 * tiles hold the places beyond the map's edge.
 */
export function tileBox({ z, x, y }: Tile): BBox {
  const n = 2 ** z;
  const pad = 1e-7;
  const edgeLat = (row: number) => latitudeOf((row / n) * SCALE);
  return {
    minLon: Math.max(-180, (x / n) * 360 - 180 - pad),
    maxLon: Math.min(180, ((x + 1) / n) * 360 - 180 + pad),
    minLat: y === n - 1 ? -90 : Math.max(-90, edgeLat(y + 1) - pad),
    maxLat: y === 0 ? 90 : Math.min(90, edgeLat(y) + pad),
  };
}

/** The latitude where web mercator's square map ends. */
export const MAP_EDGE = MERCATOR_LIMIT;

/**
 * Cluster ids: above every pinpoint id (2^52, beyond which no id is issued),
 * they name the bin the cluster fills: `2^52 + (row · 2^level + column) · 32 + level`.
 * The bin is itself the XYZ tile `level/column/row`, so a client expands a
 * cluster by showing that tile's area (docs/vector-tiles.md).
 */
const CLUSTER_BASE = 2 ** 52;
export const clusterId = (binKey: number, binLevel: number) => CLUSTER_BASE + binKey * 32 + binLevel;

export function clusterTile(id: number): Tile | null {
  if (!Number.isSafeInteger(id) || id < CLUSTER_BASE) return null;
  const rest = id - CLUSTER_BASE;
  const z = rest % 32;
  const key = (rest - z) / 32;
  return { z, x: key % 2 ** z, y: Math.floor(key / 2 ** z) };
}

/** MapLibre's abbreviation of a count (supercluster's): 1234 → "1.2k", 25000 → "25k". */
export function abbreviated(count: number): string {
  if (count >= 10_000) return `${Math.round(count / 1000)}k`;
  if (count >= 1000) return `${Math.round(count / 100) / 10}k`;
  return String(count);
}
