/**
 * /v3.0/categories: shared icons. Every caller reads every category; only the
 * owning account writes one, and the built-in category is read-only. Images
 * go through the media module: stored before the row that names them, removed
 * when replaced or when the category is deleted.
 */
import { actorsOf, toJsonWithActors, writerOf } from "../auth/actor";
import { resourceApp } from "../auth/resource-app";
import { pageOf, paginate, pageQuery } from "../http/pagination";
import { assertVersion } from "../db/versions";
import { ifMatch, jsonWithETag, notModifiedResponse, setETag } from "../http/etag";
import { ID, pathId } from "../http/path";
import { created } from "../http/responses";
import { operation } from "../http/route-metadata";
import { validate } from "../http/validation";
import { deleteMediaLater, writeWithMedia } from "../media/upload";
import { mediaUrls } from "../media/url";
import { categoryToJson } from "./json";
import { categoryCreate, categoryJson, categoryUpdate } from "./schemas";
import { categoryRows, deleteCategory, getCategory, pageCategories, writableCategory } from "./store";

const ICON = {
  type: "image/png",
  content: "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==",
};

/** What each route does, for the API reference (src/openapi). */
const operations = {
  list: operation({
    summary: "List all categories",
    description: "Every account's categories, with the built-in category 1, in creation order.",
    operationId: "listCategories",
    publishable: "across-accounts",
    responses: { 200: pageOf(categoryJson) },
  }),
  create: operation({
    summary: "Create a category",
    description: "`name` and `image_file` (the icon, base64) are required. Every client can read and use it.",
    operationId: "createCategory",
    maxBodyBytes: "MAX_BODY_BYTES",
    // A 1×1 PNG: the content must be a real file of the type named.
    examples: { "application/json": { name: "Museums", image_file: ICON } },
    responses: { 201: categoryJson },
  }),
  get: operation({
    summary: "Get a category",
    operationId: "getCategory",
    publishable: "across-accounts",
    responses: { 200: categoryJson, 304: notModifiedResponse },
  }),
  update: operation({
    summary: "Change a category",
    description: "Only its owner may; the built-in category 1 is read-only. A new `image_file` replaces the icon.",
    operationId: "updateCategory",
    maxBodyBytes: "MAX_BODY_BYTES",
    examples: { "application/json": { name: "Art museums" } },
    responses: { 200: categoryJson },
    errors: [412],
  }),
  delete: operation({
    summary: "Delete a category",
    description: "Only its owner may; the built-in category 1 cannot be deleted, nor one a pinpoint still uses (409).",
    operationId: "deleteCategory",
    responses: { 204: { description: "Deleted" } },
    errors: [409, 412],
  }),
};

export const categoryRoutes = resourceApp()
  .get(
    "/",
    ...operations.list(validate("query", pageQuery), async (c) => {
      const mediaUrl = mediaUrls(c);
      return c.json(
        await paginate(c, {
          collection: "categories",
          query: c.req.valid("query"),
          fetch: (bound, take) => pageCategories(c.env.DB, bound, take),
          pageJson: (rows) => toJsonWithActors(c, rows, (row, actors) => categoryToJson(row, mediaUrl, actors)),
        }),
      );
    }),
  )
  .post(
    "/",
    ...operations.create(validate("json", categoryCreate), async (c) => {
      const { image_file, ...fields } = c.req.valid("json");
      const row = await writeWithMedia(
        c,
        { file: image_file, pointer: "/image_file", previousKey: null, accept: "image" },
        (key) => categoryRows.insert(c.env.DB, writerOf(c.var.principal), { ...fields, image_key: key }),
      );
      setETag(c, row.version);
      return created(c, `/v3.0/categories/${row.id}`, categoryToJson(row, mediaUrls(c), await actorsOf(c, [row])));
    }),
  )
  .get(
    `/${ID}`,
    ...operations.get(async (c) => {
      const row = await getCategory(c.env.DB, pathId(c, "category"));
      return jsonWithETag(c, row.version, categoryToJson(row, mediaUrls(c), await actorsOf(c, [row])));
    }),
  )
  .put(
    `/${ID}`,
    ...operations.update(validate("json", categoryUpdate), async (c) => {
      const { principal, reach } = c.var;
      const writer = writerOf(principal);
      const { image_file, ...fields } = c.req.valid("json");
      const expected = ifMatch(c);
      // Checked before anything is uploaded: a refused write stores nothing.
      const current = await writableCategory(c.env.DB, writer.accountId, pathId(c, "category"), reach);
      assertVersion(current.version, expected, "category");
      const row = await writeWithMedia(
        c,
        { file: image_file, pointer: "/image_file", previousKey: current.image_key, accept: "image" },
        (key) => categoryRows.update(c.env.DB, writer, current.id, { ...fields, image_key: key }, reach, expected),
      );
      setETag(c, row.version);
      return c.json(categoryToJson(row, mediaUrls(c), await actorsOf(c, [row])));
    }),
  )
  .delete(
    `/${ID}`,
    ...operations.delete(async (c) => {
      const { principal, reach } = c.var;
      const row = await deleteCategory(c.env.DB, writerOf(principal), pathId(c, "category"), reach, ifMatch(c));
      deleteMediaLater(c, [row.image_key]);
      return c.body(null, 204);
    }),
  );
