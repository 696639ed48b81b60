/** /v3.0/pinpoints: HTTP in, typed store call out. */
import { idParam } from "../fields/schemas";
import { paginate, pageQuery } from "../http/pagination";
import { ID, pathId } from "../http/path";
import { created } from "../http/responses";
import { validate } from "../http/validation";
import { mediaUrls } from "../media/url";
import { resourceApp } from "../resource";
import { pinpointToJson } from "./json";
import { pinpointCreate, pinpointUpdate } from "./schemas";
import { pageListPinpoints, pinpointRows } from "./store";

const listQuery = pageQuery.extend({ list: idParam });

export const pinpointRoutes = resourceApp()
  .get("/", validate("query", listQuery), async (c) => {
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
  })
  .post("/", validate("json", pinpointCreate), async (c) => {
    const row = await pinpointRows.insert(c.env.DB, c.var.principal.accountId, c.req.valid("json"));
    return created(c, `/v3.0/pinpoints/${row.id}`, pinpointToJson(row, mediaUrls(c)));
  })
  .get(`/${ID}`, async (c) => {
    const row = await pinpointRows.get(c.env.DB, c.var.principal.accountId, pathId(c, "pinpoint"));
    return c.json(pinpointToJson(row, mediaUrls(c)));
  })
  .put(`/${ID}`, validate("json", pinpointUpdate), async (c) => {
    const id = pathId(c, "pinpoint");
    const row = await pinpointRows.update(c.env.DB, c.var.principal.accountId, id, c.req.valid("json"));
    return c.json(pinpointToJson(row, mediaUrls(c)));
  })
  .delete(`/${ID}`, async (c) => {
    await pinpointRows.delete(c.env.DB, c.var.principal.accountId, pathId(c, "pinpoint"));
    return c.body(null, 204);
  });
