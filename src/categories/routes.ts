/**
 * /v3.0/categories: shared icons. Every caller reads every category; only the
 * owning account writes one, and the built-in category is read-only. Images
 * go through the media module: stored before the row that names them, removed
 * when replaced or when the category is deleted.
 */
import { paginate, pageQuery } from "../http/pagination";
import { ID, pathId } from "../http/path";
import { created } from "../http/responses";
import { validate } from "../http/validation";
import { deleteMediaLater, writeWithMedia } from "../media/upload";
import { mediaUrls } from "../media/url";
import { resourceApp } from "../resource";
import { categoryToJson } from "./json";
import { categoryCreate, categoryUpdate } from "./schemas";
import { categoryRows, deleteCategory, getCategory, pageCategories, writableCategory } from "./store";

export const categoryRoutes = resourceApp()
  .get("/", validate("query", pageQuery), async (c) => {
    const mediaUrl = mediaUrls(c);
    return c.json(
      await paginate(c, {
        collection: "categories",
        query: c.req.valid("query"),
        fetch: (bound, take) => pageCategories(c.env.DB, bound, take),
        toJson: (row) => categoryToJson(row, mediaUrl),
      }),
    );
  })
  .post("/", validate("json", categoryCreate), async (c) => {
    const { image_file, ...fields } = c.req.valid("json");
    const row = await writeWithMedia(c, { file: image_file, pointer: "/image_file", previousKey: null }, (key) =>
      categoryRows.insert(c.env.DB, c.var.principal.accountId, { ...fields, image_key: key }),
    );
    return created(c, `/v3.0/categories/${row.id}`, categoryToJson(row, mediaUrls(c)));
  })
  .get(`/${ID}`, async (c) => c.json(categoryToJson(await getCategory(c.env.DB, pathId(c, "category")), mediaUrls(c))))
  .put(`/${ID}`, validate("json", categoryUpdate), async (c) => {
    const { accountId } = c.var.principal;
    const { image_file, ...fields } = c.req.valid("json");
    // Checked before anything is uploaded: a refused write stores nothing.
    const current = await writableCategory(c.env.DB, accountId, pathId(c, "category"));
    const row = await writeWithMedia(
      c,
      { file: image_file, pointer: "/image_file", previousKey: current.image_key },
      (key) => categoryRows.update(c.env.DB, accountId, current.id, key ? { ...fields, image_key: key } : fields),
    );
    return c.json(categoryToJson(row, mediaUrls(c)));
  })
  .delete(`/${ID}`, async (c) => {
    const row = await deleteCategory(c.env.DB, c.var.principal.accountId, pathId(c, "category"));
    deleteMediaLater(c, [row.image_key]);
    return c.body(null, 204);
  });
