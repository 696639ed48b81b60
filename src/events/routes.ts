/**
 * /v3.0/events: what happens at the caller's pinpoints. Media go through the
 * media module: stored before the row that names them, removed when replaced,
 * cleared or when the event is deleted.
 */
import { actorsOf, toJsonWithActors, writerOf } from "../auth/actor";
import { reachFor } from "../auth/operation-access";
import { resourceApp } from "../auth/resource-app";
import { idParam } from "../fields/schemas";
import { checkPoint, INSTANT_SCHEMA, instantParam, searchParams, sharedSearch } from "../fields/search-params";
import { GEOJSON } from "../geojson/features";
import { geojsonVariant } from "../geojson/negotiate";
import { eventFeatures } from "../geojson/resources";
import { pageOf, pageQuery } from "../http/pagination";
import { notFound } from "../core/problem";
import { foreignAsMissing } from "../db/ownership";
import { assertPublishedPinpoint, isPublishedPinpoint } from "../db/published";
import { assertVersion } from "../db/versions";
import { ifMatch, jsonWithETag, notModifiedResponse, setETag } from "../http/etag";
import { ID, pathId } from "../http/path";
import { created } from "../http/responses";
import { pageOrSearch } from "../http/search-pages";
import { operation } from "../http/route-metadata";
import { validate } from "../http/validation";
import { deleteMediaLater, writeWithMedia } from "../media/upload";
import { mediaUrls } from "../media/url";
import { eventToJson } from "./json";
import {
  eventCreate,
  eventFeatureCollectionJson,
  eventFeatureJson,
  eventJson,
  eventUpdate,
  foundEventJson,
} from "./schemas";
import { eventSortKeyOf, searchEvents, type EventSearch } from "./search";
import {
  assertEventPinpoint,
  assertPinpointOwner,
  eventForUpdate,
  eventRows,
  pageListsEvents,
  pagePinpointEvents,
} from "./store";

/** The search parameters; with none of them, pages are exactly as before they existed. */
const SEARCH_PARAMETERS = [
  "from",
  "to",
  "bbox",
  "latitude",
  "longitude",
  "radius",
  "q",
  "tags",
  "updated_since",
] as const;

const eventQuery = pageQuery
  .extend({
    pinpoint: idParam.meta({ description: "Only the events at this pinpoint of yours" }),
    from: instantParam.optional().meta({
      description: "ISO 8601 instant: events with an occurrence ending after it (ordered by start)",
      inputSchema: INSTANT_SCHEMA,
    }),
    to: instantParam.optional().meta({
      description: "ISO 8601 instant: events with an occurrence starting before it (ordered by start)",
      inputSchema: INSTANT_SCHEMA,
    }),
    ...searchParams,
  })
  .superRefine((value, ctx) => {
    checkPoint(value, ctx);
    if (value.from !== undefined && value.to !== undefined && value.from >= value.to) {
      ctx.addIssue({ code: "custom", path: ["from"], message: "must be before to" });
    }
  });

/** What each route does, for the API reference (src/openapi). */
const operations = {
  list: operation({
    summary: "List your events",
    description:
      "In creation order. With `pinpoint`, the events at that pinpoint (403 if it is another account's, 404 if there is no such pinpoint). " +
      "With `from`/`to`, the events with an occurrence overlapping [from, to), by the start of the first such " +
      "occurrence. Otherwise with `latitude`/`longitude`, nearest first by their pinpoint (with `distance`); " +
      "otherwise with `q`, by relevance (every word in the name, then in the name or tags, then anywhere). " +
      "`bbox`, `radius`, `q`, `tags` and `updated_since` also filter. Every order pages with `next`/`previous`.",
    operationId: "listEvents",
    publishable: true,
    responses: {
      200: {
        description: "A page of events; in GeoJSON, a FeatureCollection of them at their pinpoints",
        content: { "application/json": pageOf(foundEventJson), [GEOJSON]: eventFeatureCollectionJson },
      },
    },
    errors: [404],
  }),
  create: operation({
    summary: "Create an event",
    description:
      "`name`, `pinpoint` (one of yours) and `dates` (at least one `{start, end}`) are required. Dates are ISO 8601 " +
      "instants with an offset; answers give them in UTC with milliseconds.",
    operationId: "createEvent",
    maxBodyBytes: "MAX_BODY_BYTES",
    examples: {
      "application/json": {
        name: "Late opening",
        pinpoint: 1,
        dates: [{ start: "2026-11-21T18:30:00Z", end: "2026-11-21T21:45+01:00" }],
        tags: ["night"],
      },
    },
    responses: { 201: eventJson },
  }),
  get: operation({
    summary: "Get an event",
    operationId: "getEvent",
    publishable: true,
    responses: {
      200: {
        description: "The event; in GeoJSON, a Feature at its pinpoint",
        content: { "application/json": eventJson, [GEOJSON]: eventFeatureJson },
      },
      304: notModifiedResponse,
    },
  }),
  update: operation({
    summary: "Change an event",
    description:
      "Changes only the fields sent; a new `dates` array replaces the old one; `null` clears an optional field.",
    operationId: "updateEvent",
    maxBodyBytes: "MAX_BODY_BYTES",
    examples: { "application/json": { tags: ["night", "free"] } },
    responses: { 200: eventJson },
    errors: [412],
  }),
  delete: operation({
    summary: "Delete an event",
    operationId: "deleteEvent",
    responses: { 204: { description: "Deleted" } },
    errors: [412],
  }),
};

/** GeoJSON on request (Accept or format=geojson), made from the JSON answer of each GET. */
const geojson = geojsonVariant(eventFeatures);

export const eventRoutes = resourceApp()
  .get(
    "/",
    ...operations.list(validate("query", eventQuery), geojson, async (c) => {
      const query = c.req.valid("query");
      const { principal, reach } = c.var;
      const { accountId } = principal;
      const { pinpoint } = query;
      const mediaUrl = mediaUrls(c);
      // A publishable key reads the events at its lists' pinpoints: at one it publishes, or at all of them.
      // A list collaborator reads the events at the pinpoints of their lists.
      const published = principal.kind === "key" && pinpoint === undefined ? principal.lists : undefined;
      const within =
        principal.kind === "key" ? published : pinpoint === undefined ? (reach.sees ?? undefined) : undefined;
      if (principal.kind === "key" && pinpoint !== undefined) {
        await foreignAsMissing(assertPinpointOwner(c.env.DB, accountId, pinpoint, reach), "pinpoint");
        await assertPublishedPinpoint(c.env.DB, principal.lists, pinpoint);
      }
      return c.json(
        await pageOrSearch(c, {
          collection: "events",
          query,
          searchParameters: SEARCH_PARAMETERS,
          filters: pinpoint === undefined ? {} : { pinpoint },
          alwaysSearch: published !== undefined,
          page: (bound, take) =>
            pinpoint !== undefined
              ? pagePinpointEvents(c.env.DB, accountId, pinpoint, reach, bound, take)
              : reach.sees !== null
                ? pageListsEvents(c.env.DB, accountId, reach.sees, bound, take)
                : eventRows.page(c.env.DB, accountId, bound, take),
          search: async () => {
            if (pinpoint !== undefined) await assertPinpointOwner(c.env.DB, accountId, pinpoint, reach);
            const { from, to } = query;
            const search: EventSearch = { ...sharedSearch(query), from, to, pinpoint, within };
            return {
              fetch: (bound, take) => searchEvents(c.env.DB, accountId, search, bound, take),
              keyOf: eventSortKeyOf(search),
            };
          },
          pageJson: (rows) => toJsonWithActors(c, rows, (row, actors) => eventToJson(row, mediaUrl, actors)),
        }),
      );
    }),
  )
  .post(
    "/",
    ...operations.create(validate("json", eventCreate), async (c) => {
      const { principal, reach } = c.var;
      const writer = writerOf(principal);
      const { media_file, ...fields } = c.req.valid("json");
      // Checked before anything is uploaded: a refused write stores nothing.
      await assertEventPinpoint(c.env.DB, writer.accountId, fields.pinpoint, reach);
      const row = await writeWithMedia(c, { file: media_file, pointer: "/media_file", previousKey: null }, (key) =>
        eventRows.insert(c.env.DB, writer, { ...fields, media_key: key }),
      );
      setETag(c, row.version);
      return created(c, `/v3.0/events/${row.id}`, eventToJson(row, mediaUrls(c), await actorsOf(c, [row])));
    }),
  )
  .get(
    `/${ID}`,
    ...operations.get(geojson, async (c) => {
      const { principal, reach } = c.var;
      const read = eventRows.get(c.env.DB, principal.accountId, pathId(c, "event"), reach);
      const row = await (principal.kind === "key" ? foreignAsMissing(read, "event") : read);
      if (principal.kind === "key" && !(await isPublishedPinpoint(c.env.DB, principal.lists, row.pinpoint))) {
        throw notFound("event");
      }
      return jsonWithETag(c, row.version, eventToJson(row, mediaUrls(c), await actorsOf(c, [row])));
    }),
  )
  .put(
    `/${ID}`,
    ...operations.update(validate("json", eventUpdate), async (c) => {
      const { principal, reach } = c.var;
      const writer = writerOf(principal);
      const { media_file, ...fields } = c.req.valid("json");
      const expected = ifMatch(c);
      // Moving the event places it at another pinpoint, as creating one there would.
      const placing = reachFor(principal, "createEvent");
      const id = pathId(c, "event");
      const current = await eventForUpdate(c.env.DB, writer.accountId, id, fields.pinpoint, reach, placing);
      assertVersion(current.version, expected, "event");
      const row = await writeWithMedia(
        c,
        { file: media_file, pointer: "/media_file", previousKey: current.media_key },
        (key) => eventRows.update(c.env.DB, writer, current.id, { ...fields, media_key: key }, reach, expected),
      );
      setETag(c, row.version);
      return c.json(eventToJson(row, mediaUrls(c), await actorsOf(c, [row])));
    }),
  )
  .delete(
    `/${ID}`,
    ...operations.delete(async (c) => {
      const { principal, reach } = c.var;
      const row = await eventRows.delete(c.env.DB, writerOf(principal), pathId(c, "event"), reach, ifMatch(c));
      deleteMediaLater(c, [row.media_key]);
      return c.body(null, 204);
    }),
  );
