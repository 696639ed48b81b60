/**
 * The TileJSON 3.0 document of the caller's tiles
 * (https://github.com/mapbox/tilejson-spec/tree/master/3.0.0): the URL
 * template carries the request's filters and its `key` or `access_token`, so
 * a map library, QGIS or GDAL needs this one URL. `bounds` holds every place
 * the tiles can show, from the precomputed cells (src/db/search/tile-cells.ts) at
 * the finest level where the scope occupies a bounded number of them: a
 * constant cost, and edges accurate to that level's cells.
 */
import type { Context } from "hono";
import * as z from "zod";
import type { AppEnv } from "../core/env";
import { scopeExtent, QUANTIZED_BITS, type TileScope } from "../db/search/tile-cells";
import { latitudeOf, MAP_EDGE, MAX_ZOOM } from "./grid";
import { cellScope, type TileFilters, type TileReader } from "./source";

export const TILE_LAYER = "pinpoints";

/** The layer's fields and their types, as TileJSON and GDAL read them. */
const FIELDS = {
  id: "Number",
  name: "String",
  category: "Number",
  tags: "String",
  cluster: "Boolean",
  cluster_id: "Number",
  point_count: "Number",
  point_count_abbreviated: "String",
} as const;

export const tileJsonSchema = z
  .object({
    tilejson: z.literal("3.0.0"),
    name: z.string(),
    description: z.string(),
    scheme: z.literal("xyz"),
    tiles: z.array(z.string()),
    minzoom: z.number().int(),
    maxzoom: z.number().int(),
    bounds: z.tuple([z.number(), z.number(), z.number(), z.number()]),
    vector_layers: z.array(
      z.object({
        id: z.string(),
        description: z.string(),
        minzoom: z.number().int(),
        maxzoom: z.number().int(),
        fields: z.record(z.string(), z.string()),
      }),
    ),
  })
  .meta({ id: "TileJSON" });

type Bounds = [number, number, number, number];
const WORLD: Bounds = [-180, -MAP_EDGE, 180, MAP_EDGE];

/** The query parameters the tiles' URL keeps: the filters and the credential in the query, as given. */
const KEPT = ["list", "category", "tags", "q", "updated_since", "key", "access_token"];

async function boundsOf(d1: D1Database, reader: TileReader, filters: TileFilters): Promise<Bounds> {
  // The filters without cells only narrow a scope that has them: its extent holds theirs.
  const scopes: TileScope[] = [];
  const whole = cellScope(reader, { list: filters.list });
  if (whole) scopes.push(whole);
  else for (const listId of reader.published ?? []) scopes.push({ accountId: reader.accountId, listId });
  let bounds: Bounds | null = null;
  for (const scope of scopes) {
    const extent = await scopeExtent(d1, scope);
    if (!extent) continue;
    const { level, cells } = extent;
    const unit = 2 ** (QUANTIZED_BITS - level);
    const box: Bounds = [
      (cells[0] / 2 ** level) * 360 - 180,
      latitudeOf((cells[3] + 1) * unit),
      ((cells[2] + 1) / 2 ** level) * 360 - 180,
      latitudeOf(cells[1] * unit),
    ];
    bounds = bounds
      ? [
          Math.min(bounds[0], box[0]),
          Math.min(bounds[1], box[1]),
          Math.max(bounds[2], box[2]),
          Math.max(bounds[3], box[3]),
        ]
      : box;
  }
  return bounds ?? WORLD;
}

export async function tileJson(
  c: Context<AppEnv>,
  reader: TileReader,
  filters: TileFilters,
): Promise<z.output<typeof tileJsonSchema>> {
  const url = new URL(c.req.url);
  const template = new URL("/v3.0/tiles/{z}/{x}/{y}.mvt", url.origin);
  for (const name of KEPT) {
    const value = url.searchParams.get(name);
    // An empty `key=` is no credential (http/middleware/query-parameters.ts); empty filters never get here (400).
    if (value) template.searchParams.set(name, value);
  }
  // URL encodes the braces of the template; TileJSON wants them as they are.
  const tiles = template.toString().replace(/%7B([xyz])%7D/g, "{$1}");
  return {
    tilejson: "3.0.0",
    name: "Pinpoints",
    description: "Your pinpoints, clustered where dense, as vector tiles (docs/vector-tiles.md).",
    scheme: "xyz",
    tiles: [tiles],
    minzoom: 0,
    maxzoom: MAX_ZOOM,
    bounds: await boundsOf(c.env.DB, reader, filters),
    vector_layers: [
      {
        id: TILE_LAYER,
        description: "Places, and clusters of places where they are dense",
        minzoom: 0,
        maxzoom: MAX_ZOOM,
        fields: FIELDS,
      },
    ],
  };
}
