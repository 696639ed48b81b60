/** /v3.0/pinpoints: HTTP in, typed store call out. */
import * as z from "zod";
import { actorsOf, toJsonWithActors, writerOf } from "../auth/actor";
import { resourceApp } from "../auth/resource-app";
import { notFound } from "../core/problem";
import { foreignAsMissing } from "../db/ownership";
import { assertPublishedPinpoint, publishesList } from "../db/published";
import { assertVersion } from "../db/versions";
import { idParam } from "../fields/schemas";
import { checkPoint, categoryParam, searchParams, sharedSearch } from "../fields/search-params";
import { GEOJSON } from "../geojson/features";
import { geojsonVariant } from "../geojson/negotiate";
import { pinpointFeatures } from "../geojson/resources";
import { pageOf, pageQuery } from "../http/pagination";
import { ifMatch, jsonWithETag, notModifiedResponse, setETag } from "../http/etag";
import { ID, pathId } from "../http/path";
import { created } from "../http/responses";
import { pageOrSearch } from "../http/search-pages";
import { operation } from "../http/route-metadata";
import { validate } from "../http/validation";
import { deleteMediaLater, writeWithMedia } from "../media/upload";
import { mediaUrls } from "../media/url";
import { bulkImport, importedJson, pinpointImport } from "./import";
import { pinpointToJson } from "./json";
import {
  foundPinpointJson,
  pinpointCreate,
  pinpointFeatureCollectionJson,
  pinpointFeatureJson,
  pinpointJson,
  pinpointUpdate,
} from "./schemas";
import { searchPinpoints, sortKeyOf, type PinpointSearch } from "./search";
import {
  assertListOwner,
  deletePinpoint,
  listKeyOf,
  pageListPinpoints,
  pageListsPinpoints,
  pinpointRows,
} from "./store";

/** The search parameters; with none of them, pages are exactly as before they existed. */
const SEARCH_PARAMETERS = [
  "bbox",
  "latitude",
  "longitude",
  "radius",
  "q",
  "tags",
  "category",
  "updated_since",
] as const;

const listQuery = pageQuery
  .extend({
    list: idParam.meta({ description: "Only the pinpoints of this list of yours" }),
    order: z.enum(["id", "position"], 'must be "id" or "position"').optional().meta({
      description:
        "`id` (the default): by pinpoint id; `position`: in the list's own order (`PUT /v3.0/lists/{id}/pinpoints/order`), with `list`",
    }),
    ...searchParams,
    category: categoryParam,
  })
  .superRefine(checkPoint)
  .superRefine(checkOrder);

/** The owner's order is a list's: it needs `list`, and no search that has an order of its own. */
function checkOrder(query: { order?: string; list?: number; q?: unknown; latitude?: number }, ctx: z.RefinementCtx) {
  if (query.order !== "position") return;
  if (query.list === undefined) {
    ctx.addIssue({ code: "custom", path: ["order"], message: "position is a list's order: it needs list" });
  }
  for (const [name, ordered] of [
    ["q", "by relevance"],
    ["latitude", "nearest first"],
  ] as const) {
    if (query[name] !== undefined) {
      ctx.addIssue({
        code: "custom",
        path: ["order"],
        message: `position cannot be combined with ${name}, which orders ${ordered}`,
      });
    }
  }
}

/** What each route does, for the API reference (src/openapi). */
const operations = {
  list: operation({
    summary: "List your pinpoints",
    description:
      "In creation order. With `list`, the pinpoints of that list (403 if it is another account's, 404 if there is no such list), " +
      "by id, or with `order=position` in the list's own order. " +
      "Filters combine: `bbox` (a viewport), `q` (text), `tags`, `category`, `updated_since`. " +
      "With `latitude` and `longitude`, nearest first, each with its `distance` in metres, within `radius` if given; " +
      "else with `q`, by relevance: every word in the name, then in the name, address or tags, then anywhere " +
      "(ties by id). Every order pages with `next`/`previous`.",
    operationId: "listPinpoints",
    publishable: true,
    responses: {
      200: {
        description: "A page of pinpoints; in GeoJSON, a FeatureCollection with `next`/`prev` links",
        content: { "application/json": pageOf(foundPinpointJson), [GEOJSON]: pinpointFeatureCollectionJson },
      },
    },
    errors: [404],
  }),
  create: operation({
    summary: "Create a pinpoint, or import many from GeoJSON",
    description:
      "`name`, `latitude` and `longitude` are required. `description` is HTML, stored sanitized; " +
      "`category` must name an existing category; `media_file` uploads an image or video as base64.\n\n" +
      "With `Content-Type: application/geo+json`, a bulk import: a FeatureCollection of up to 1,000 Point " +
      "features whose properties are pinpoint fields (media are added afterwards with PUT). All or nothing: " +
      "201 with the new ids in feature order, or a 400 naming every bad feature by a JSON pointer into the " +
      "body (`/features/17/geometry/coordinates/1`) that wrote nothing.",
    operationId: "createPinpoint",
    // A media file, or a GeoJSON import: 1,000 features at their schema's bounds (a 100,000-character
    // description each, 6 bytes a character escaped) would be ~600 MB, so the configured maximum is the bound.
    maxBodyBytes: "MAX_BODY_BYTES",
    body: { [GEOJSON]: pinpointImport },
    examples: {
      "application/json": {
        name: "Musée d'Orsay",
        latitude: 48.86,
        longitude: 2.3266,
        address: "1 Rue de la Légion d'Honneur, Paris",
        tags: ["museum", "art"],
        description: "<p>Impressionist paintings in a former railway station.</p>",
      },
      [GEOJSON]: {
        type: "FeatureCollection",
        features: [
          {
            type: "Feature",
            geometry: { type: "Point", coordinates: [2.2945, 48.8584] },
            properties: { name: "Eiffel Tower", tags: ["landmark"] },
          },
        ],
      },
    },
    responses: {
      201: {
        description: "The pinpoint created (a JSON body), or the ids of those imported (a GeoJSON body)",
        content: { "application/json": z.union([pinpointJson, importedJson]) },
      },
    },
  }),
  get: operation({
    summary: "Get a pinpoint",
    operationId: "getPinpoint",
    publishable: true,
    responses: {
      200: {
        description: "The pinpoint; in GeoJSON, a Feature",
        content: { "application/json": pinpointJson, [GEOJSON]: pinpointFeatureJson },
      },
      304: notModifiedResponse,
    },
  }),
  update: operation({
    summary: "Change a pinpoint",
    description:
      'Changes only the fields sent; `null` clears an optional one (`"media_file": null` deletes the media).',
    operationId: "updatePinpoint",
    maxBodyBytes: "MAX_BODY_BYTES",
    examples: { "application/json": { address: "62 Rue de Lille, Paris", tags: ["museum"] } },
    responses: { 200: pinpointJson },
    errors: [412],
  }),
  delete: operation({
    summary: "Delete a pinpoint",
    description: "Also removes it from your lists and deletes its events and media.",
    operationId: "deletePinpoint",
    responses: { 204: { description: "Deleted" } },
    errors: [412],
  }),
};

/** GeoJSON on request (Accept or format=geojson), made from the JSON answer of each GET. */
const geojson = geojsonVariant(pinpointFeatures);

export const pinpointRoutes = resourceApp()
  .get(
    "/",
    ...operations.list(validate("query", listQuery), geojson, async (c) => {
      const query = c.req.valid("query");
      const { principal, reach } = c.var;
      const { accountId } = principal;
      const { list } = query;
      const order = query.order === "position" ? "position" : "id";
      const mediaUrl = mediaUrls(c);
      // A publishable key reads its lists' pinpoints: one list it publishes, or all of them. Its lists are
      // known; whether one is the account's, the reads below check, another account's being absent to it.
      // A list collaborator reads the pinpoints of their lists.
      const published = principal.kind === "key" && list === undefined ? principal.lists : undefined;
      const within = principal.kind === "key" ? published : list === undefined ? (reach.sees ?? undefined) : undefined;
      if (principal.kind === "key" && list !== undefined && !publishesList(principal.lists, list)) {
        throw notFound("list");
      }
      const ownList = <T>(read: Promise<T>) => (principal.kind === "key" ? foreignAsMissing(read, "list") : read);
      return c.json(
        await pageOrSearch(c, {
          collection: "pinpoints",
          query,
          searchParameters: SEARCH_PARAMETERS,
          // The order is a filter of the pages: their links carry it, and their cursors are bound to it.
          filters: list === undefined ? {} : order === "position" ? { list, order } : { list },
          alwaysSearch: published !== undefined,
          page: (bound, take) =>
            list !== undefined
              ? ownList(pageListPinpoints(c.env.DB, accountId, list, reach, bound, take, order))
              : reach.sees !== null
                ? pageListsPinpoints(c.env.DB, accountId, reach.sees, bound, take)
                : pinpointRows.page(c.env.DB, accountId, bound, take),
          pageKeyOf: listKeyOf(order),
          search: async () => {
            if (list !== undefined) await ownList(assertListOwner(c.env.DB, accountId, list, reach));
            const search: PinpointSearch = { ...sharedSearch(query), category: query.category, list, order, within };
            return {
              fetch: (bound, take) => searchPinpoints(c.env.DB, accountId, search, bound, take),
              keyOf: sortKeyOf(search),
            };
          },
          pageJson: (rows) => toJsonWithActors(c, rows, (row, actors) => pinpointToJson(row, mediaUrl, actors)),
        }),
      );
    }),
  )
  .post(
    "/",
    ...operations.create(bulkImport(), validate("json", pinpointCreate), async (c) => {
      const { media_file, ...fields } = c.req.valid("json");
      const row = await writeWithMedia(
        c,
        { file: media_file, pointer: "/media_file", previousKey: null },
        (media_key) => pinpointRows.insert(c.env.DB, writerOf(c.var.principal), { ...fields, media_key }),
      );
      setETag(c, row.version);
      return created(c, `/v3.0/pinpoints/${row.id}`, pinpointToJson(row, mediaUrls(c), await actorsOf(c, [row])));
    }),
  )
  .get(
    `/${ID}`,
    ...operations.get(geojson, async (c) => {
      const { principal, reach } = c.var;
      const id = pathId(c, "pinpoint");
      const read = pinpointRows.get(c.env.DB, principal.accountId, id, reach);
      const row = await (principal.kind === "key" ? foreignAsMissing(read, "pinpoint") : read);
      if (principal.kind === "key") await assertPublishedPinpoint(c.env.DB, principal.lists, id);
      return jsonWithETag(c, row.version, pinpointToJson(row, mediaUrls(c), await actorsOf(c, [row])));
    }),
  )
  .put(
    `/${ID}`,
    ...operations.update(validate("json", pinpointUpdate), async (c) => {
      const id = pathId(c, "pinpoint");
      const { principal, reach } = c.var;
      const writer = writerOf(principal);
      const { media_file, ...fields } = c.req.valid("json");
      const expected = ifMatch(c);
      // With a file, ownership (and version) first, so a 403/404/412 costs no upload; its current key goes once replaced.
      let previousKey: string | null = null;
      if (media_file !== undefined) {
        const current = await pinpointRows.get(c.env.DB, writer.accountId, id, reach);
        assertVersion(current.version, expected, "pinpoint");
        previousKey = current.media_key;
      }
      const row = await writeWithMedia(c, { file: media_file, pointer: "/media_file", previousKey }, (media_key) =>
        pinpointRows.update(c.env.DB, writer, id, { ...fields, media_key }, reach, expected),
      );
      setETag(c, row.version);
      return c.json(pinpointToJson(row, mediaUrls(c), await actorsOf(c, [row])));
    }),
  )
  .delete(
    `/${ID}`,
    ...operations.delete(async (c) => {
      const id = pathId(c, "pinpoint");
      const { principal, reach } = c.var;
      deleteMediaLater(c, await deletePinpoint(c.env.DB, writerOf(principal), id, reach, ifMatch(c)));
      return c.body(null, 204);
    }),
  );
