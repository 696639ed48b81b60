/** /v3.0/pinpoints: HTTP in, typed store call out. */
import { resourceApp } from "../auth/resource-app";
import { assertVersion } from "../db/versions";
import { idParam } from "../fields/schemas";
import { pageOf, paginate, pageQuery } from "../http/pagination";
import { ifMatch, jsonWithETag, notModifiedResponse, setETag } from "../http/etag";
import { ID, pathId } from "../http/path";
import { created } from "../http/responses";
import { operation } from "../http/route-metadata";
import { validate } from "../http/validation";
import { deleteMediaLater, writeWithMedia } from "../media/upload";
import { mediaUrls } from "../media/url";
import { pinpointToJson } from "./json";
import { pinpointCreate, pinpointJson, pinpointUpdate } from "./schemas";
import { deletePinpoint, pageListPinpoints, pinpointRows } from "./store";

const listQuery = pageQuery.extend({ list: idParam.meta({ description: "Only the pinpoints of this list of yours" }) });

/** What each route does, for the API reference (src/openapi). */
const operations = {
  list: operation({
    summary: "List your pinpoints",
    description: "In creation order. With `list`, the pinpoints of that list (403 if it is another account's).",
    operationId: "listPinpoints",
    responses: { 200: pageOf(pinpointJson) },
  }),
  create: operation({
    summary: "Create a pinpoint",
    description:
      "`name`, `latitude` and `longitude` are required. `description` is HTML, stored sanitized; " +
      "`category` must name an existing category; `media_file` uploads an image or video as base64.",
    operationId: "createPinpoint",
    responses: { 201: pinpointJson },
  }),
  get: operation({
    summary: "Get a pinpoint",
    operationId: "getPinpoint",
    responses: { 200: pinpointJson, 304: notModifiedResponse },
  }),
  update: operation({
    summary: "Change a pinpoint",
    description:
      'Changes only the fields sent; `null` clears an optional one (`"media_file": null` deletes the media).',
    operationId: "updatePinpoint",
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

export const pinpointRoutes = resourceApp()
  .get(
    "/",
    ...operations.list(validate("query", listQuery), async (c) => {
      const query = c.req.valid("query");
      const { accountId } = c.var.principal;
      const { list } = query;
      const mediaUrl = mediaUrls(c);
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
      setETag(c, row.version);
      return created(c, `/v3.0/pinpoints/${row.id}`, pinpointToJson(row, mediaUrls(c)));
    }),
  )
  .get(
    `/${ID}`,
    ...operations.get(async (c) => {
      const row = await pinpointRows.get(c.env.DB, c.var.principal.accountId, pathId(c, "pinpoint"));
      return jsonWithETag(c, row.version, pinpointToJson(row, mediaUrls(c)));
    }),
  )
  .put(
    `/${ID}`,
    ...operations.update(validate("json", pinpointUpdate), async (c) => {
      const id = pathId(c, "pinpoint");
      const { accountId } = c.var.principal;
      const { media_file, ...fields } = c.req.valid("json");
      const expected = ifMatch(c);
      // With a file, ownership (and version) first, so a 403/404/412 costs no upload; its current key goes once replaced.
      let previousKey: string | null = null;
      if (media_file !== undefined) {
        const current = await pinpointRows.get(c.env.DB, accountId, id);
        assertVersion(current.version, expected, "pinpoint");
        previousKey = current.media_key;
      }
      const row = await writeWithMedia(c, { file: media_file, pointer: "/media_file", previousKey }, (media_key) =>
        pinpointRows.update(c.env.DB, accountId, id, { ...fields, media_key }, expected),
      );
      setETag(c, row.version);
      return c.json(pinpointToJson(row, mediaUrls(c)));
    }),
  )
  .delete(
    `/${ID}`,
    ...operations.delete(async (c) => {
      const id = pathId(c, "pinpoint");
      deleteMediaLater(c, await deletePinpoint(c.env.DB, c.var.principal.accountId, id, ifMatch(c)));
      return c.body(null, 204);
    }),
  );
