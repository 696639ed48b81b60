/**
 * /v3.0/events: what happens at the caller's pinpoints. Media go through the
 * media module: stored before the row that names them, removed when replaced,
 * cleared or when the event is deleted.
 */
import { idParam } from "../fields/schemas";
import { paginate, pageQuery } from "../http/pagination";
import { ID, pathId } from "../http/path";
import { created } from "../http/responses";
import { validate } from "../http/validation";
import { deleteMediaLater, writeWithMedia } from "../media/upload";
import { mediaUrls } from "../media/url";
import { resourceApp } from "../resource";
import { eventToJson } from "./json";
import { eventCreate, eventUpdate } from "./schemas";
import { assertEventPinpoint, eventForUpdate, eventRows, pagePinpointEvents } from "./store";

const eventQuery = pageQuery.extend({ pinpoint: idParam });

export const eventRoutes = resourceApp()
  .get("/", validate("query", eventQuery), async (c) => {
    const query = c.req.valid("query");
    const { accountId } = c.var.principal;
    const { pinpoint } = query;
    const mediaUrl = mediaUrls(c);
    return c.json(
      await paginate(c, {
        collection: "events",
        query,
        filters: pinpoint === undefined ? {} : { pinpoint },
        fetch: (bound, take) =>
          pinpoint === undefined
            ? eventRows.page(c.env.DB, accountId, bound, take)
            : pagePinpointEvents(c.env.DB, accountId, pinpoint, bound, take),
        toJson: (row) => eventToJson(row, mediaUrl),
      }),
    );
  })
  .post("/", validate("json", eventCreate), async (c) => {
    const { accountId } = c.var.principal;
    const { media_file, ...fields } = c.req.valid("json");
    // Checked before anything is uploaded: a refused write stores nothing.
    await assertEventPinpoint(c.env.DB, accountId, fields.pinpoint);
    const row = await writeWithMedia(c, { file: media_file, pointer: "/media_file", previousKey: null }, (key) =>
      eventRows.insert(c.env.DB, accountId, { ...fields, media_key: key }),
    );
    return created(c, `/v3.0/events/${row.id}`, eventToJson(row, mediaUrls(c)));
  })
  .get(`/${ID}`, async (c) => {
    const row = await eventRows.get(c.env.DB, c.var.principal.accountId, pathId(c, "event"));
    return c.json(eventToJson(row, mediaUrls(c)));
  })
  .put(`/${ID}`, validate("json", eventUpdate), async (c) => {
    const { accountId } = c.var.principal;
    const { media_file, ...fields } = c.req.valid("json");
    const current = await eventForUpdate(c.env.DB, accountId, pathId(c, "event"), fields.pinpoint);
    const row = await writeWithMedia(
      c,
      { file: media_file, pointer: "/media_file", previousKey: current.media_key },
      (key) =>
        eventRows.update(c.env.DB, accountId, current.id, key === undefined ? fields : { ...fields, media_key: key }),
    );
    return c.json(eventToJson(row, mediaUrls(c)));
  })
  .delete(`/${ID}`, async (c) => {
    const row = await eventRows.delete(c.env.DB, c.var.principal.accountId, pathId(c, "event"));
    deleteMediaLater(c, [row.media_key]);
    return c.body(null, 204);
  });
