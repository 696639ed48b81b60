/**
 * OGC API – Features, Part 1 (Core, GeoJSON) and Part 3's queryables under
 * /ogc, for GIS clients (QGIS, GDAL/OGR, OpenLayers, Leaflet plugins): landing
 * page, API definition, conformance, the caller's collections, their schemas
 * and queryables, and their items. Same token as /v3.0 (header or
 * `access_token`), or a publishable key, which sees its lists as the
 * collections (src/ogc/collections.ts); unknown query parameters are a 400 here, as the standard
 * requires. docs/ogc.md maps each requirement to where it is met and its test.
 */
import { Hono, type Context } from "hono";
import * as z from "zod";
import { resourceApp } from "../auth/resource-app";
import type { AppEnv } from "../core/env";
import { ApiError, notFound } from "../core/problem";
import { GEOJSON, type Link } from "../geojson/features";
import { paginate } from "../http/pagination";
import { queryCredentials } from "../http/middleware/query-parameters";
import { OPENAPI_MEDIA_TYPE, operation } from "../http/route-metadata";
import { validate } from "../http/validation";
import { collectionOf, collectionsOf, type Collection } from "./collections";
import { knownParameters, ogcBbox, ogcCursor, ogcDatetime, ogcFormat, ogcLimit } from "./params";
import { QUERYABLE_SCHEMAS, queryableParams, type QueryableName } from "./queryables";

export const OGC_PREFIX = "/ogc";

const JSON_TYPE = "application/json";
const SCHEMA_TYPE = "application/schema+json";

type PropertySchema = { type?: string | string[]; format?: string; description?: string; items?: unknown };

/**
 * One property's JSON Schema as GIS clients read it: a plain `type` (GDAL
 * types its fields from it, so `category` is an integer column), the nullable
 * `anyOf` zod writes folded into the type; a schema named by reference (an
 * actor, `created_by`) or a choice of several is an object (GDAL: a JSON field).
 */
function plainProperty(schema: Record<string, unknown>): PropertySchema {
  const variants = (schema.anyOf as Record<string, unknown>[] | undefined) ?? [schema];
  const main = variants.find((v) => v.type !== "null") ?? {};
  const object = main.type === undefined && (main.$ref !== undefined || main.oneOf !== undefined);
  const plain: PropertySchema = { type: object ? "object" : (main.type as string) };
  if (typeof main.format === "string") plain.format = main.format;
  if (main.items) plain.items = main.items;
  const description = schema.description ?? main.description;
  if (typeof description === "string") plain.description = description;
  return plain;
}

/**
 * A JSON Schema about a collection, at `/collections/{id}/{resource}`: its `$id` is that URL
 * without query parameters (/req/queryables/get-queryables-response B), so no credential either.
 */
const collectionSchema = (c: Context<AppEnv>, collection: Collection, resource: string, properties: object) => ({
  $schema: "https://json-schema.org/draft/2020-12/schema",
  $id: new URL(`${OGC_PREFIX}/collections/${collection.id}/${resource}`, c.req.url).toString(),
  title: collection.title,
  type: "object",
  properties,
});

/** The JSON Schema of a collection's feature properties (OGC API – Features Part 5 style, `describedby`). */
function propertiesSchema(c: Context<AppEnv>, collection: Collection) {
  const json = z.toJSONSchema(collection.properties, { io: "output", unrepresentable: "any" }) as {
    properties?: Record<string, Record<string, unknown>>;
  };
  return collectionSchema(
    c,
    collection,
    "schema",
    Object.fromEntries(Object.entries(json.properties ?? {}).map(([name, schema]) => [name, plainProperty(schema)])),
  );
}

/** The properties a collection's items are filtered on (Part 3 Queryables); no other name is one. */
const queryablesSchema = (c: Context<AppEnv>, collection: Collection) => ({
  ...collectionSchema(
    c,
    collection,
    "queryables",
    Object.fromEntries(collection.queryables.map((name) => [name, QUERYABLE_SCHEMAS[name]])),
  ),
  additionalProperties: false,
});

const CRS84 = "http://www.opengis.net/def/crs/OGC/1.3/CRS84";

export const CONFORMANCE = [
  "http://www.opengis.net/spec/ogcapi-features-1/1.0/conf/core",
  "http://www.opengis.net/spec/ogcapi-features-1/1.0/conf/geojson",
  "http://www.opengis.net/spec/ogcapi-features-3/1.0/conf/queryables",
  "http://www.opengis.net/spec/ogcapi-features-3/1.0/conf/queryables-query-parameters",
];

const QUERYABLES_REL = "http://www.opengis.net/def/rel/ogc/1.0/queryables";

/** An absolute URL under /ogc on the request's origin; the query token or key, if used, rides along. */
function href(c: Context<AppEnv>, path: string, params: Record<string, string> = {}): string {
  const url = new URL(path, c.req.url);
  for (const [name, value] of Object.entries(params)) url.searchParams.set(name, value);
  for (const [name, value] of queryCredentials(c)) url.searchParams.set(name, value);
  return url.toString();
}

const link = (c: Context<AppEnv>, path: string, rel: string, type: string, title?: string): Link => ({
  href: href(c, path),
  rel,
  type,
  ...(title ? { title } : {}),
});

/** A collection's description; the same in /collections and /collections/{id} (/req/core/sfc-md-success). */
function describe(c: Context<AppEnv>, collection: Collection) {
  const path = `${OGC_PREFIX}/collections/${collection.id}`;
  return {
    id: collection.id,
    title: collection.title,
    description: collection.description,
    links: [
      link(c, path, "self", JSON_TYPE, "This collection"),
      link(c, `${path}/items`, "items", GEOJSON, "Its features"),
      link(c, `${path}/schema`, "describedby", SCHEMA_TYPE, "The schema of its features' properties"),
      link(c, `${path}/queryables`, QUERYABLES_REL, SCHEMA_TYPE, "The properties its items can be filtered on"),
    ],
    // The whole globe bounds every feature (/req/core/fc-md-extent) without a scan of the collection.
    extent: { spatial: { bbox: [[-180, -90, 180, 90]], crs: CRS84 } },
    itemType: "feature",
    crs: [CRS84],
  };
}

const noParameters = z.object({ f: ogcFormat("json") });
const featureQuery = z.object({ f: ogcFormat("json", "geojson") });
const itemsQuery = z.object({
  limit: ogcLimit,
  cursor: ogcCursor,
  bbox: ogcBbox,
  datetime: ogcDatetime,
  ...queryableParams,
  f: ogcFormat("json", "geojson"),
});

/** The parameters an items page's links carry as the client wrote them (the cursor is bound to them). */
const SELECTION_PARAMETERS = ["bbox", "datetime", ...(Object.keys(queryableParams) as QueryableName[])] as const;

/** 400 for a queryable parameter the collection does not offer (another collection's, e.g. `pinpoint` on a list). */
function checkQueryables(collection: Collection, query: Partial<Record<QueryableName, unknown>>) {
  const offered = new Set<string>(collection.queryables);
  const errors = (Object.keys(queryableParams) as QueryableName[])
    .filter((name) => query[name] !== undefined && !offered.has(name))
    .map((parameter) => ({
      parameter,
      detail: `is not a queryable of ${collection.id}, whose queryables are ${collection.queryables.join(", ")}`,
    }));
  if (errors.length > 0) {
    const names = errors.map((e) => e.parameter).join(", ");
    throw new ApiError("validation_failed", `Not a queryable of this collection: ${names}.`, { errors });
  }
}

const collectionId = {
  collectionId: { description: "`pinpoints`, `events` or `list-{id}` for one of your lists", example: "pinpoints" },
};

const operations = {
  landing: operation({
    summary: "OGC API – Features landing page",
    description: "Links to the API definition, the conformance declaration and the collections.",
    operationId: "getOgcLandingPage",
    tags: ["ogc"],
    publishable: true,
    responses: { 200: { description: "The landing page", mediaType: JSON_TYPE } },
  }),
  conformance: operation({
    summary: "OGC conformance classes this API meets",
    operationId: "getOgcConformance",
    tags: ["ogc"],
    publishable: true,
    responses: { 200: { description: "`conformsTo`: Core and GeoJSON of Part 1", mediaType: JSON_TYPE } },
  }),
  collections: operation({
    summary: "Your feature collections",
    description:
      "`pinpoints`, `events`, and one `list-{id}` per list of yours; with a publishable key, one `list-{id}` per list it publishes.",
    operationId: "getOgcCollections",
    tags: ["ogc"],
    publishable: true,
    responses: { 200: { description: "The collections", mediaType: JSON_TYPE } },
  }),
  collection: operation({
    summary: "One feature collection",
    operationId: "getOgcCollection",
    tags: ["ogc"],
    publishable: true,
    pathParams: collectionId,
    responses: { 200: { description: "The collection", mediaType: JSON_TYPE } },
    errors: [404],
  }),
  schema: operation({
    summary: "The schema of a collection's feature properties",
    description:
      "JSON Schema of the `properties` of its features, so GIS clients type each field (`category` is an integer).",
    operationId: "getOgcCollectionSchema",
    tags: ["ogc"],
    publishable: true,
    pathParams: collectionId,
    responses: { 200: { description: "The JSON Schema", mediaType: SCHEMA_TYPE } },
    errors: [404],
  }),
  queryables: operation({
    summary: "The properties a collection's items can be filtered on",
    description:
      "OGC API – Features Part 3 Queryables: a JSON Schema with one property per queryable, each also a query " +
      "parameter of the items (`category` and `tags` on pinpoints and lists, `pinpoint` and `tags` on events).",
    operationId: "getOgcQueryables",
    tags: ["ogc"],
    publishable: true,
    pathParams: collectionId,
    responses: { 200: { description: "The JSON Schema of the queryables", mediaType: SCHEMA_TYPE } },
    errors: [404],
  }),
  items: operation({
    summary: "Features of a collection",
    description:
      "A GeoJSON FeatureCollection, paged with `limit` and the `next`/`prev` links. The collection's queryables " +
      "filter it: `category`, `tags` (pinpoints and lists), `pinpoint`, `tags` (events); another collection's " +
      "queryable and unknown parameters are a 400.",
    operationId: "getOgcItems",
    tags: ["ogc"],
    publishable: true,
    pathParams: collectionId,
    responses: { 200: { description: "One page of features", mediaType: GEOJSON } },
    errors: [404],
  }),
  item: operation({
    summary: "One feature",
    operationId: "getOgcItem",
    tags: ["ogc"],
    publishable: true,
    pathParams: { ...collectionId, featureId: "The pinpoint's or event's id" },
    responses: { 200: { description: "The feature", mediaType: GEOJSON } },
    errors: [404],
  }),
};

/** A path parameter of these routes (typed loosely by Hono where the route is declared apart from its handler). */
const pathParam = (c: Context<AppEnv>, name: string): string => c.req.param(name) ?? "";

const geojson = (c: Context<AppEnv>, body: unknown) => c.body(JSON.stringify(body), 200, { "Content-Type": GEOJSON });

export const ogcRoutes = resourceApp()
  .get(
    "/",
    ...operations.landing(knownParameters(noParameters), validate("query", noParameters), (c) =>
      c.json({
        title: "POI content API – OGC API – Features",
        description: "Your pinpoints, events and lists as feature collections, for GIS clients.",
        links: [
          link(c, OGC_PREFIX, "self", JSON_TYPE, "This document"),
          link(c, `${OGC_PREFIX}/api`, "service-desc", OPENAPI_MEDIA_TYPE, "API definition"),
          link(c, "/docs", "service-doc", "text/html", "API reference"),
          link(c, `${OGC_PREFIX}/conformance`, "conformance", JSON_TYPE, "Conformance classes"),
          link(c, `${OGC_PREFIX}/collections`, "data", JSON_TYPE, "Collections"),
        ],
      }),
    ),
  )
  .get(
    "/conformance",
    ...operations.conformance(knownParameters(noParameters), validate("query", noParameters), (c) =>
      c.json({ conformsTo: CONFORMANCE }),
    ),
  )
  .get(
    "/collections",
    ...operations.collections(knownParameters(noParameters), validate("query", noParameters), async (c) =>
      c.json({
        links: [link(c, `${OGC_PREFIX}/collections`, "self", JSON_TYPE, "Collections")],
        collections: (await collectionsOf(c)).map((collection) => describe(c, collection)),
      }),
    ),
  )
  .get(
    "/collections/:collectionId",
    ...operations.collection(knownParameters(noParameters), validate("query", noParameters), async (c) =>
      c.json(describe(c, await collectionOf(c, pathParam(c, "collectionId")))),
    ),
  )
  .get(
    "/collections/:collectionId/schema",
    ...operations.schema(knownParameters(noParameters), validate("query", noParameters), async (c) => {
      const collection = await collectionOf(c, pathParam(c, "collectionId"));
      return c.body(JSON.stringify(propertiesSchema(c, collection)), 200, { "Content-Type": SCHEMA_TYPE });
    }),
  )
  .get(
    "/collections/:collectionId/queryables",
    ...operations.queryables(knownParameters(noParameters), validate("query", noParameters), async (c) => {
      const collection = await collectionOf(c, pathParam(c, "collectionId"));
      return c.body(JSON.stringify(queryablesSchema(c, collection)), 200, { "Content-Type": SCHEMA_TYPE });
    }),
  )
  .get(
    "/collections/:collectionId/items",
    ...operations.items(knownParameters(itemsQuery), validate("query", itemsQuery), async (c) => {
      const collection = await collectionOf(c, pathParam(c, "collectionId"));
      const query = c.req.valid("query");
      checkQueryables(collection, query);
      // The links carry the selection as the client wrote it; the cursor is bound to it.
      const filters: Record<string, string> = {};
      for (const name of SELECTION_PARAMETERS) {
        const value = c.req.query(name);
        if (value !== undefined) filters[name] = value;
      }
      // A datetime interval includes its end; the occurrence search takes [from, to).
      const { bbox, datetime, category, tags, pinpoint } = query;
      const selection = {
        bbox,
        from: datetime?.from,
        to: datetime?.to === undefined ? undefined : datetime.to + 1,
        category,
        tags,
        pinpoint,
      };
      const page = await paginate(c, {
        collection: collection.cursorScope,
        query,
        filters,
        fetch: (bound, take) => collection.page(c, selection, bound, take),
        toJson: (row) => row.feature,
        keyOf: (row) => row.key,
      });
      const links: Link[] = [
        { href: c.req.url, rel: "self", type: GEOJSON, title: "This page" },
        ...(page.next ? [{ href: page.next, rel: "next", type: GEOJSON, title: "Next page" }] : []),
        ...(page.previous ? [{ href: page.previous, rel: "prev", type: GEOJSON, title: "Previous page" }] : []),
        link(c, `${OGC_PREFIX}/collections/${collection.id}`, "collection", JSON_TYPE, collection.title),
      ];
      return geojson(c, {
        type: "FeatureCollection",
        features: page.results,
        links,
        numberReturned: page.results.length,
        timeStamp: new Date().toISOString(),
      });
    }),
  )
  .get(
    "/collections/:collectionId/items/:featureId",
    ...operations.item(knownParameters(featureQuery), validate("query", featureQuery), async (c) => {
      const collection = await collectionOf(c, pathParam(c, "collectionId"));
      const featureId = Number(pathParam(c, "featureId"));
      if (!/^[1-9]\d{0,14}$/.test(pathParam(c, "featureId"))) throw notFound("feature");
      const feature = await collection.feature(c, featureId);
      const self = `${OGC_PREFIX}/collections/${collection.id}/items/${featureId}`;
      return geojson(c, {
        ...feature,
        links: [
          link(c, self, "self", GEOJSON, "This feature"),
          link(c, `${OGC_PREFIX}/collections/${collection.id}`, "collection", JSON_TYPE, collection.title),
        ],
      });
    }),
  );

/** What `/ogc/api` answers: an OpenAPI 3.1 object. */
const openApiObject = z.looseObject({ openapi: z.string().startsWith("3.1.") });

/**
 * `GET /ogc/api`, the landing page's `service-desc`: the OpenAPI document of the /ogc operations
 * alone, with paths relative to /ogc, which GDAL's OAPIF driver reads to learn the items' query
 * parameters (docs/ogc.md "Queryables"). The document is built by src/openapi/, a layer above:
 * app.ts passes its handler in and mounts this after `ogcRoutes`, whose token check it shares.
 */
export const ogcDefinitionRoutes = (definition: (c: Context<AppEnv>) => Response) =>
  new Hono<AppEnv>().get(
    "/api",
    ...operation({
      summary: "The OGC API – Features definition",
      description:
        "The OpenAPI document of the `/ogc` operations alone, with `/ogc` as its server: " +
        `\`${OPENAPI_MEDIA_TYPE}\` when Accept names that type (and no other version), else JSON.`,
      operationId: "getOgcApiDefinition",
      tags: ["ogc"],
      publishable: true,
      responses: {
        200: {
          description: "The OpenAPI document",
          content: { "application/json": openApiObject, "application/vnd.oai.openapi+json": openApiObject },
          headers: { Vary: { description: "`Accept`" } },
        },
      },
    })(knownParameters(noParameters), validate("query", noParameters), definition),
  );
