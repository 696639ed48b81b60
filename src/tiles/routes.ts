/**
 * Vector tiles of the caller's pinpoints (docs/vector-tiles.md):
 * `/v3.0/tiles/{z}/{x}/{y}.mvt` (Mapbox Vector Tile 2.1), the same features as
 * GeoJSON at `.geojson`, and `/v3.0/tiles.json`, the TileJSON 3.0 document
 * that map libraries, QGIS and GDAL open the tiles by. Web mercator XYZ, z 0
 * to 22; the filters of GET /v3.0/pinpoints that make sense for a map. A
 * publishable key reads them as it reads the pinpoints, through the public
 * cache. What a tile reads, and what each filter costs: ./source.ts.
 */
import type { Context } from "hono";
import * as z from "zod";
import { resourceApp } from "../auth/resource-app";
import type { AppEnv } from "../core/env";
import { assertListPublished } from "../db/published";
import { idParam } from "../fields/schemas";
import { categoryParam, qParam, tagsParam, updatedSinceParam } from "../fields/search-params";
import { GEOJSON } from "../geojson/features";
import { contentETag, noneMatch, notModifiedResponse } from "../http/etag";
import { operation } from "../http/route-metadata";
import { validate } from "../http/validation";
import { assertListOwner } from "../pinpoints/store";
import { geojsonFeatures, mvtFeatures, tileFeatures } from "./features";
import { MAX_ZOOM, type Tile } from "./grid";
import { encodeTile } from "./mvt";
import { tileContent, type TileFilters, type TileReader } from "./source";
import { tileJson, tileJsonSchema, TILE_LAYER } from "./tilejson";

export const MVT = "application/vnd.mapbox-vector-tile";

const coordinate = (what: string) =>
  z
    .string()
    .regex(/^(0|[1-9]\d{0,6})$/, `must be a whole number from 0 to 2^z - 1`)
    .transform(Number)
    .meta({ description: what });

/** `{z}`, `{x}` and `{y}` (with its `.mvt` or `.geojson`, which the route already matched). */
const tileParams = z
  .object({
    z: z
      .string()
      .regex(/^(0|[1-9]\d?)$/, `must be a whole number from 0 to ${MAX_ZOOM}`)
      .transform(Number)
      .refine((n) => n <= MAX_ZOOM, `must be a whole number from 0 to ${MAX_ZOOM}`)
      .meta({ description: `Zoom level, 0 to ${MAX_ZOOM}` }),
    x: coordinate("Column, 0 (the antimeridian, west) to 2^z - 1"),
    y: z
      .string()
      .transform((text) => text.replace(/\.(mvt|geojson)$/, ""))
      .pipe(coordinate("Row, 0 (north) to 2^z - 1")),
  })
  .superRefine((tile, ctx) => {
    for (const axis of ["x", "y"] as const) {
      if (tile[axis] >= 2 ** tile.z) {
        ctx.addIssue({ code: "custom", path: [axis], message: `must be less than 2^z = ${2 ** tile.z}` });
      }
    }
  });

/** The filters of GET /v3.0/pinpoints that a map can use; others are ignored, as /v3.0 does. */
export const tileQuery = z.object({
  list: idParam.meta({ description: "Only the pinpoints of this list of yours" }),
  category: categoryParam,
  tags: tagsParam,
  q: qParam,
  updated_since: updatedSinceParam,
});

const filtersOf = (query: z.output<typeof tileQuery>): TileFilters => ({
  list: query.list,
  category: query.category,
  tags: query.tags,
  q: query.q,
  updatedSince: query.updated_since,
});

/** The caller's reader, after the 403/404 of a list that is not theirs (or not the key's). */
async function readerFor(c: Context<AppEnv>, list: number | undefined): Promise<TileReader> {
  const { principal } = c.var;
  if (list !== undefined) {
    if (principal.kind === "key") await assertListPublished(c.env.DB, principal, list);
    else await assertListOwner(c.env.DB, principal.accountId, list, c.var.reach);
  }
  return { accountId: principal.accountId, published: principal.kind === "key" ? principal.lists : undefined };
}

const propertiesNote =
  "A place has `id`, `name`, `category` and `tags` (comma-separated); where places are dense, a cluster has " +
  "`cluster: true`, `cluster_id` (also the feature's id), `point_count` and `point_count_abbreviated` and is drawn " +
  `at its places' centroid. From TILE_CLUSTER_MAXZOOM (16 by default) every place is its own feature. Counts are exact.`;

const tilePath = {
  z: { description: "Zoom, 0 to 22", example: "2" },
  x: { description: "Column, 0 to 2^z − 1", example: "2" },
  y: { description: "Row, 0 to 2^z − 1", example: "1" },
};

const operations = {
  mvt: operation({
    summary: "A vector tile of your pinpoints",
    description:
      `Mapbox Vector Tile 2.1, one layer \`${TILE_LAYER}\`, extent 4096, web mercator XYZ. ${propertiesNote} ` +
      "An empty tile is 200 with an empty body. Filters as on GET /v3.0/pinpoints.",
    operationId: "getTileMvt",
    tags: ["tiles"],
    publishable: true,
    pathParams: tilePath,
    responses: {
      200: { description: "The tile (empty when no place is in it)", mediaType: MVT },
      304: notModifiedResponse,
    },
    errors: [404, 422],
  }),
  geojson: operation({
    summary: "A tile's features as GeoJSON",
    description: `The features of the same tile in .mvt, as a FeatureCollection in longitude/latitude. ${propertiesNote}`,
    operationId: "getTileGeojson",
    tags: ["tiles"],
    publishable: true,
    pathParams: tilePath,
    responses: {
      200: {
        description: "The tile's features",
        content: {
          [GEOJSON]: z.object({
            type: z.literal("FeatureCollection"),
            features: z.array(
              z.object({
                type: z.literal("Feature"),
                id: z.number().int(),
                geometry: z.object({ type: z.literal("Point"), coordinates: z.tuple([z.number(), z.number()]) }),
                properties: z.record(z.string(), z.union([z.string(), z.number(), z.boolean(), z.null()])),
              }),
            ),
          }),
        },
      },
      304: notModifiedResponse,
    },
    errors: [404, 422],
  }),
  tileJson: operation({
    summary: "TileJSON of your pinpoints' vector tiles",
    description:
      "TileJSON 3.0: the tiles' URL template (with the filters and the `key` or `access_token` of this request), " +
      "zoom range, the bounds of your places and the layer's fields. MapLibre, QGIS and GDAL open the tiles by this URL.",
    operationId: "getTileJson",
    tags: ["tiles"],
    publishable: true,
    responses: { 200: tileJsonSchema },
    errors: [404],
  }),
};

/** A tile's bytes with a strong ETag of them, or 304 when If-None-Match names it. */
async function tileResponse(c: Context<AppEnv>, body: Uint8Array<ArrayBuffer> | string, type: string) {
  const etag = await contentETag(body);
  c.header("ETag", etag);
  if (noneMatch(c.req.header("If-None-Match"), etag)) return c.body(null, 304);
  return c.body(body, 200, { "Content-Type": type });
}

type TileRequest = { param: z.output<typeof tileParams>; query: z.output<typeof tileQuery> };

async function tileFeaturesFor(c: Context<AppEnv>, { param, query }: TileRequest) {
  const tile: Tile = { z: param.z, x: param.x, y: param.y };
  const reader = await readerFor(c, query.list);
  const content = await tileContent(c.env.DB, reader, filtersOf(query), tile, c.var.config.tileClusterMaxZoom);
  return tileFeatures(tile, content);
}

export const tileRoutes = resourceApp()
  .get(
    "/:z/:x/:y{.+\\.mvt}",
    ...operations.mvt(validate("param", tileParams), validate("query", tileQuery), async (c) => {
      const features = await tileFeaturesFor(c, { param: c.req.valid("param"), query: c.req.valid("query") });
      return tileResponse(c, encodeTile(TILE_LAYER, mvtFeatures(features)), MVT);
    }),
  )
  .get(
    "/:z/:x/:y{.+\\.geojson}",
    ...operations.geojson(validate("param", tileParams), validate("query", tileQuery), async (c) => {
      const features = await tileFeaturesFor(c, { param: c.req.valid("param"), query: c.req.valid("query") });
      return tileResponse(
        c,
        JSON.stringify({ type: "FeatureCollection", features: geojsonFeatures(features) }),
        GEOJSON,
      );
    }),
  );

export const tileJsonRoutes = resourceApp().get(
  "/",
  ...operations.tileJson(validate("query", tileQuery), async (c) => {
    const query = c.req.valid("query");
    const reader = await readerFor(c, query.list);
    return c.json(await tileJson(c, reader, filtersOf(query)));
  }),
);
