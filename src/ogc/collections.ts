/**
 * The caller's feature collections: `pinpoints`, `events`, and `list-{id}` for
 * each of its lists. Each knows how to read a page of its rows and one of its
 * features, as GeoJSON made by the same functions as /v3.0's (src/geojson).
 */
import type { Context } from "hono";
import type { AppEnv } from "../core/env";
import { ApiError, notFound } from "../core/problem";
import { pinpointLocations } from "../db/locations";
import type { Bound } from "../db/keyset";
import type { Event, Pinpoint } from "../db/schema";
import { eventToJson } from "../events/json";
import { eventRows } from "../events/store";
import { eventFeature, pinpointFeature, type Feature } from "../geojson/features";
import { mediaUrls } from "../media/url";
import { pinpointToJson } from "../pinpoints/json";
import { pageListPinpoints, pinpointRows } from "../pinpoints/store";
import { accountList, accountLists, listMember, type ListSummary } from "./store";

export type Collection = {
  id: string;
  title: string;
  description: string;
  /** One page of features from `bound`, and each one's sort key for the cursors. */
  page(c: Context<AppEnv>, bound: Bound, take: number): Promise<FeatureRow[]>;
  /** The feature with this id, or a 404. */
  feature(c: Context<AppEnv>, featureId: number): Promise<Feature>;
};

/** A feature with the id its order pages by. */
export type FeatureRow = { id: number; feature: Feature };

const pinpointRow = (c: Context<AppEnv>) => {
  const mediaUrl = mediaUrls(c);
  return (row: Pinpoint): FeatureRow => ({ id: row.id, feature: pinpointFeature(pinpointToJson(row, mediaUrl)) });
};

async function eventFeatureRows(c: Context<AppEnv>, rows: Event[]): Promise<FeatureRow[]> {
  const mediaUrl = mediaUrls(c);
  const ids = [...new Set(rows.map((row) => row.pinpoint))];
  const locations = await pinpointLocations(c.env.DB, c.var.principal.accountId, ids);
  return rows.map((row) => ({
    id: row.id,
    feature: eventFeature(eventToJson(row, mediaUrl), locations.get(row.pinpoint)),
  }));
}

/** Another account's row is no feature of the caller's collection: 404 here, where /v3.0 says 403. */
async function ownFeature<T>(read: Promise<T>): Promise<T> {
  try {
    return await read;
  } catch (error) {
    if (error instanceof ApiError && error.code === "forbidden") throw notFound("feature");
    throw error;
  }
}

const pinpointsCollection: Collection = {
  id: "pinpoints",
  title: "Pinpoints",
  description: "Your places, in creation order.",
  async page(c, bound, take) {
    return (await pinpointRows.page(c.env.DB, c.var.principal.accountId, bound, take)).map(pinpointRow(c));
  },
  async feature(c, id) {
    return pinpointRow(c)(await ownFeature(pinpointRows.get(c.env.DB, c.var.principal.accountId, id))).feature;
  },
};

const eventsCollection: Collection = {
  id: "events",
  title: "Events",
  description: "What happens at your pinpoints, each at its pinpoint's location, in creation order.",
  async page(c, bound, take) {
    return eventFeatureRows(c, await eventRows.page(c.env.DB, c.var.principal.accountId, bound, take));
  },
  async feature(c, id) {
    const [row] = await eventFeatureRows(c, [await ownFeature(eventRows.get(c.env.DB, c.var.principal.accountId, id))]);
    return row!.feature;
  },
};

const LIST_ID = /^list-([1-9]\d{0,14})$/;

function listCollection(list: ListSummary): Collection {
  return {
    id: `list-${list.id}`,
    title: list.name,
    description: `The pinpoints of your list “${list.name}”, in the order they were added to it.`,
    async page(c, bound, take) {
      const rows = await pageListPinpoints(c.env.DB, c.var.principal.accountId, list.id, bound, take);
      return rows.map(pinpointRow(c));
    },
    async feature(c, id) {
      const row = await listMember(c.env.DB, c.var.principal.accountId, list.id, id);
      if (!row) throw notFound("feature");
      return pinpointRow(c)(row).feature;
    },
  };
}

/** Every collection of the caller, lists last in id order. */
export async function collectionsOf(c: Context<AppEnv>): Promise<Collection[]> {
  const lists = await accountLists(c.env.DB, c.var.principal.accountId);
  return [pinpointsCollection, eventsCollection, ...lists.map(listCollection)];
}

/** The caller's collection with this id, or a 404 (another account's list included). */
export async function collectionOf(c: Context<AppEnv>, id: string): Promise<Collection> {
  if (id === pinpointsCollection.id) return pinpointsCollection;
  if (id === eventsCollection.id) return eventsCollection;
  const listId = LIST_ID.exec(id)?.[1];
  const list =
    listId === undefined ? undefined : await accountList(c.env.DB, c.var.principal.accountId, Number(listId));
  if (!list) throw notFound("collection");
  return listCollection(list);
}
