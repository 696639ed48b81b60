/**
 * The caller's feature collections: `pinpoints`, `events`, and `list-{id}` for
 * each of its lists. Each knows how to read a page of its rows and one of its
 * features, as GeoJSON made by the same functions as /v3.0's (src/geojson).
 */
import type { Context } from "hono";
import { actorsOf } from "../auth/actor";
import type { AppEnv } from "../core/env";
import { notFound } from "../core/problem";
import { foreignAsMissing } from "../db/ownership";
import { pinpointLocations } from "../db/locations";
import type { Bound } from "../db/keyset";
import type { Event, Pinpoint } from "../db/schema";
import type { BBox } from "../db/search/geo";
import { eventToJson } from "../events/json";
import { eventJson } from "../events/schemas";
import { pinpointJson } from "../pinpoints/schemas";
import type * as z from "zod";
import { eventSortKeyOf, searchEvents, type EventSearch } from "../events/search";
import { eventRows } from "../events/store";
import { eventFeature, pinpointFeature, type Feature } from "../geojson/features";
import { mediaUrls } from "../media/url";
import { pinpointToJson } from "../pinpoints/json";
import { searchPinpoints, sortKeyOf, type PinpointSearch } from "../pinpoints/search";
import { listKeyOf, pageListPinpoints, pinpointRows } from "../pinpoints/store";
import type { QueryableFilters, QueryableName } from "./queryables";
import { accountList, accountLists, listMember, type ListSummary } from "./store";

/**
 * What an items request selects (/req/core/fc-bbox-definition, fc-time-definition):
 * a box, a time range in milliseconds (`to` exclusive), either end open, and
 * the collection's queryables (src/ogc/queryables.ts).
 */
export type Selection = { bbox?: BBox; from?: number; to?: number } & QueryableFilters;

export type Collection = {
  id: string;
  /**
   * What its page cursors are bound to: the collection and the order its pages come in, so a cursor
   * issued for another order (a list's, by id before lists had an order of their own) is refused.
   */
  cursorScope: string;
  title: string;
  description: string;
  /** One page of the selected features from `bound`, each with its sort key for the cursors. */
  page(c: Context<AppEnv>, selection: Selection, bound: Bound, take: number): Promise<FeatureRow[]>;
  /** The feature with this id, or a 404. */
  feature(c: Context<AppEnv>, featureId: number): Promise<Feature>;
  /** The features' properties, for the collection's schema (the `describedby` link). */
  properties: z.ZodObject;
  /** The properties its items can be filtered on server-side (its `/queryables`). */
  queryables: readonly QueryableName[];
};

/** A pinpoint feature's properties: its JSON less what the geometry and the feature id carry. */
const pinpointProperties = pinpointJson.omit({ id: true, latitude: true, longitude: true, altitude: true });
const eventProperties = eventJson.omit({ id: true });

/** A feature with its position in the order its page was read in. */
export type FeatureRow = { key: readonly number[]; feature: Feature };

const byId = (row: { id: number }) => [row.id];

async function pinpointFeatureRows<Row extends Pinpoint>(
  c: Context<AppEnv>,
  rows: Row[],
  keyOf: (row: Row) => number[] = byId,
): Promise<FeatureRow[]> {
  const mediaUrl = mediaUrls(c);
  const actors = await actorsOf(c, rows);
  return rows.map((row) => ({ key: keyOf(row), feature: pinpointFeature(pinpointToJson(row, mediaUrl, actors)) }));
}

async function eventFeatureRows<Row extends Event>(
  c: Context<AppEnv>,
  rows: Row[],
  keyOf: (row: Row) => number[] = byId,
): Promise<FeatureRow[]> {
  const mediaUrl = mediaUrls(c);
  const ids = [...new Set(rows.map((row) => row.pinpoint))];
  const [locations, actors] = await Promise.all([
    pinpointLocations(c.env.DB, c.var.principal.accountId, ids),
    actorsOf(c, rows),
  ]);
  return rows.map((row) => ({
    key: keyOf(row),
    feature: eventFeature(eventToJson(row, mediaUrl, actors), locations.get(row.pinpoint)),
  }));
}

/**
 * With a box, a category or tags, the pinpoint search of the query issue (R*Tree, then exact
 * columns); pinpoints have no time, so any time matches. A list's members come in the list's own order
 * (src/db/list-positions.ts), selected or not.
 */
async function pinpointPage(
  c: Context<AppEnv>,
  { bbox, category, tags }: Selection,
  list: number | undefined,
  bound: Bound,
  take: number,
) {
  const { accountId } = c.var.principal;
  const order = list === undefined ? "id" : "position";
  if (bbox || category !== undefined || tags) {
    const search: PinpointSearch = {
      bbox,
      list,
      order,
      tags,
      category: category === undefined ? undefined : [category],
    };
    return pinpointFeatureRows(c, await searchPinpoints(c.env.DB, accountId, search, bound, take), sortKeyOf(search));
  }
  const rows =
    list === undefined
      ? await pinpointRows.page(c.env.DB, accountId, bound, take)
      : await pageListPinpoints(c.env.DB, accountId, list, c.var.reach, bound, take, order);
  return pinpointFeatureRows(c, rows, listKeyOf(order));
}

/** Another account's row is no feature of the caller's collection: 404 here, where /v3.0 says 403. */
const ownFeature = <T>(read: Promise<T>) => foreignAsMissing(read, "feature");

/** What pinpoint collections filter on: the search's `category` and `tags`. */
const pinpointQueryables = ["category", "tags"] as const;

const pinpointsCollection: Collection = {
  properties: pinpointProperties,
  queryables: pinpointQueryables,
  id: "pinpoints",
  cursorScope: "ogc:pinpoints",
  title: "Pinpoints",
  description: "Your places, in creation order.",
  page: (c, selection, bound, take) => pinpointPage(c, selection, undefined, bound, take),
  async feature(c, id) {
    const row = await ownFeature(pinpointRows.get(c.env.DB, c.var.principal.accountId, id, c.var.reach));
    return (await pinpointFeatureRows(c, [row]))[0]!.feature;
  },
};

const eventsCollection: Collection = {
  properties: eventProperties,
  queryables: ["pinpoint", "tags"],
  id: "events",
  cursorScope: "ogc:events",
  title: "Events",
  description: "What happens at your pinpoints, each at its pinpoint's location, in creation order.",
  /** With any selection, the event search of the query issue: by occurrence (in time order) or place. */
  async page(c, { bbox, from, to, pinpoint, tags }, bound, take) {
    const { accountId } = c.var.principal;
    const search: EventSearch = { bbox, from, to, pinpoint, tags };
    if (Object.values(search).every((value) => value === undefined)) {
      return eventFeatureRows(c, await eventRows.page(c.env.DB, accountId, bound, take));
    }
    return eventFeatureRows(c, await searchEvents(c.env.DB, accountId, search, bound, take), eventSortKeyOf(search));
  },
  async feature(c, id) {
    const [row] = await eventFeatureRows(c, [
      await ownFeature(eventRows.get(c.env.DB, c.var.principal.accountId, id, c.var.reach)),
    ]);
    return row!.feature;
  },
};

const LIST_ID = /^list-([1-9]\d{0,14})$/;

function listCollection(list: ListSummary): Collection {
  return {
    id: `list-${list.id}`,
    cursorScope: `ogc:list-${list.id}:position`,
    properties: pinpointProperties,
    queryables: pinpointQueryables,
    title: list.name,
    // Keyset pages over the list's `(position, pinpoint_id)` index: the list's own order.
    description: `The pinpoints of your list “${list.name}”, in the list's order.`,
    page: (c, selection, bound, take) => pinpointPage(c, selection, list.id, bound, take),
    async feature(c, id) {
      const row = await listMember(c.env.DB, c.var.principal.accountId, list.id, id);
      if (!row) throw notFound("feature");
      return (await pinpointFeatureRows(c, [row]))[0]!.feature;
    },
  };
}

/** The lists a publishable key publishes, or null for every list of the account (and for an access token). */
const publishedLists = (c: Context<AppEnv>) => (c.var.principal.kind === "key" ? c.var.principal.lists : null);

/**
 * Every collection of the caller, lists last in id order. A publishable key
 * sees only the lists it publishes: the account's other places are not public.
 */
export async function collectionsOf(c: Context<AppEnv>): Promise<Collection[]> {
  const lists = await accountLists(c.env.DB, c.var.principal.accountId, publishedLists(c));
  const everything = c.var.principal.kind === "key" ? [] : [pinpointsCollection, eventsCollection];
  return [...everything, ...lists.map(listCollection)];
}

/** The caller's collection with this id, or a 404 (another account's list included). */
export async function collectionOf(c: Context<AppEnv>, id: string): Promise<Collection> {
  // An access token's (a client's or a person's); a publishable key reads its lists only.
  if (c.var.principal.kind !== "key") {
    if (id === pinpointsCollection.id) return pinpointsCollection;
    if (id === eventsCollection.id) return eventsCollection;
  }
  const listId = Number(LIST_ID.exec(id)?.[1]);
  const published = publishedLists(c);
  const list =
    listId && (published === null || published.includes(listId))
      ? await accountList(c.env.DB, c.var.principal.accountId, listId)
      : undefined;
  if (!list) throw notFound("collection");
  return listCollection(list);
}
