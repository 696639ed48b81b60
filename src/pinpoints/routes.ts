/** /v3.0/pinpoints: HTTP in, typed store call out. */
import { resourceApp } from "../auth/resource-app";
import { idParam } from "../fields/schemas";
import { checkPoint, categoryParam, searchParams } from "../fields/search-params";
import { pageOf, paginate, pageQuery } from "../http/pagination";
import { ID, pathId } from "../http/path";
import { created } from "../http/responses";
import { operation } from "../http/route-metadata";
import { validate } from "../http/validation";
import { deleteMediaLater, writeWithMedia } from "../media/upload";
import { mediaUrls } from "../media/url";
import { pinpointToJson } from "./json";
import { foundPinpointJson, pinpointCreate, pinpointJson, pinpointUpdate } from "./schemas";
import { searchPinpoints, sortKeyOf, type PinpointSearch } from "./search";
import { assertListOwner, deletePinpoint, pageListPinpoints, pinpointRows } from "./store";

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
    ...searchParams,
    category: categoryParam,
  })
  .superRefine(checkPoint);

/** What each route does, for the API reference (src/openapi). */
const operations = {
  list: operation({
    summary: "List your pinpoints",
    description:
      "In creation order. With `list`, the pinpoints of that list (403 if it is another account's). " +
      "Filters combine: `bbox` (a viewport), `q` (text), `tags`, `category`, `updated_since`. " +
      "With `latitude` and `longitude`, nearest first, each with its `distance` in metres, within `radius` if given; " +
      "else with `q`, by relevance: every word in the name, then in the name, address or tags, then anywhere " +
      "(ties by id). Every order pages with `next`/`previous`.",
    operationId: "listPinpoints",
    responses: { 200: pageOf(foundPinpointJson) },
  }),
  create: operation({
    summary: "Create a pinpoint",
    description:
      "`name`, `latitude` and `longitude` are required. `description` is HTML, stored sanitized; " +
      "`category` must name an existing category; `media_file` uploads an image or video as base64.",
    operationId: "createPinpoint",
    responses: { 201: pinpointJson },
  }),
  get: operation({ summary: "Get a pinpoint", operationId: "getPinpoint", responses: { 200: pinpointJson } }),
  update: operation({
    summary: "Change a pinpoint",
    description:
      'Changes only the fields sent; `null` clears an optional one (`"media_file": null` deletes the media).',
    operationId: "updatePinpoint",
    responses: { 200: pinpointJson },
  }),
  delete: operation({
    summary: "Delete a pinpoint",
    description: "Also removes it from your lists and deletes its events and media.",
    operationId: "deletePinpoint",
    responses: { 204: { description: "Deleted" } },
  }),
};

export const pinpointRoutes = resourceApp()
  .get(
    "/",
    ...operations.list(validate("query", listQuery), async (c) => {
      const query = c.req.valid("query");
      const { accountId } = c.var.principal;
      const { list } = query;
      const mediaUrl = mediaUrls(c);
      const given = SEARCH_PARAMETERS.filter((name) => query[name] !== undefined);
      if (given.length === 0) {
        return c.json(
          await paginate(c, {
            collection: "pinpoints",
            query,
            filters: list === undefined ? {} : { list },
            fetch: (bound, take) =>
              list === undefined
                ? pinpointRows.page(c.env.DB, accountId, bound, take)
                : pageListPinpoints(c.env.DB, accountId, list, bound, take),
            toJson: (row) => pinpointToJson(row, mediaUrl),
          }),
        );
      }
      const { bbox, latitude, longitude, radius, q, tags, category, updated_since } = query;
      const search: PinpointSearch = {
        bbox,
        near: latitude === undefined || longitude === undefined ? undefined : { latitude, longitude, radius },
        q,
        tags,
        category,
        updatedSince: updated_since,
        list,
      };
      if (list !== undefined) await assertListOwner(c.env.DB, accountId, list);
      // The links carry each filter as the client wrote it, which the cursor is bound to.
      const filters: Record<string, string | number> = list === undefined ? {} : { list };
      for (const name of given) filters[name] = c.req.query(name)!;
      return c.json(
        await paginate(c, {
          collection: "pinpoints",
          query,
          filters,
          fetch: (bound, take) => searchPinpoints(c.env.DB, accountId, search, bound, take),
          keyOf: sortKeyOf(search),
          toJson: (row) => ({
            ...pinpointToJson(row, mediaUrl),
            ...(row.distance === undefined ? {} : { distance: row.distance }),
          }),
        }),
      );
    }),
  )
  .post(
    "/",
    ...operations.create(validate("json", pinpointCreate), async (c) => {
      const { media_file, ...fields } = c.req.valid("json");
      const row = await writeWithMedia(
        c,
        { file: media_file, pointer: "/media_file", previousKey: null },
        (media_key) => pinpointRows.insert(c.env.DB, c.var.principal.accountId, { ...fields, media_key }),
      );
      return created(c, `/v3.0/pinpoints/${row.id}`, pinpointToJson(row, mediaUrls(c)));
    }),
  )
  .get(
    `/${ID}`,
    ...operations.get(async (c) => {
      const row = await pinpointRows.get(c.env.DB, c.var.principal.accountId, pathId(c, "pinpoint"));
      return c.json(pinpointToJson(row, mediaUrls(c)));
    }),
  )
  .put(
    `/${ID}`,
    ...operations.update(validate("json", pinpointUpdate), async (c) => {
      const id = pathId(c, "pinpoint");
      const { accountId } = c.var.principal;
      const { media_file, ...fields } = c.req.valid("json");
      // With a file, ownership first, so a 403/404 costs no upload; its current key goes once replaced.
      const previousKey = media_file === undefined ? null : (await pinpointRows.get(c.env.DB, accountId, id)).media_key;
      const row = await writeWithMedia(c, { file: media_file, pointer: "/media_file", previousKey }, (media_key) =>
        pinpointRows.update(c.env.DB, accountId, id, { ...fields, media_key }),
      );
      return c.json(pinpointToJson(row, mediaUrls(c)));
    }),
  )
  .delete(
    `/${ID}`,
    ...operations.delete(async (c) => {
      deleteMediaLater(c, await deletePinpoint(c.env.DB, c.var.principal.accountId, pathId(c, "pinpoint")));
      return c.body(null, 204);
    }),
  );
