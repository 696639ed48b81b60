/**
 * Request and response shapes of events, derived from the `events` table;
 * the refinements add the API's rules (CONTRACT "Resources", Event).
 */
import { createInsertSchema, createSelectSchema, createUpdateSchema } from "drizzle-zod";
import * as z from "zod";
import { writtenByJson } from "../auth/actor";
import { events } from "../db/schema";
import * as field from "../fields/schemas";
import { featureCollectionSchema, featureSchema, pointSchema } from "../geojson/features";
import { mediaFile } from "../media/file";
import { dateList } from "./dates";

const refinements = {
  // Required on create, optional on update: refined from the column's own schema.
  name: () => field.name,
  pinpoint: () => field.id,
  dates: () => dateList,
  // Optional everywhere; `null` clears.
  description: field.description.optional(),
  media_credits: field.text(1000).optional(),
  tags: field.tags.optional(),
};

/** Fields a client may send; anything else in the body is ignored. */
const writable = {
  name: true,
  pinpoint: true,
  dates: true,
  description: true,
  media_credits: true,
  tags: true,
} as const;

/** `media_file`: an object stores new media, `null` clears it, absent leaves it unchanged. */
const media = { media_file: mediaFile.nullable().optional() };

/** POST body: name, pinpoint and at least one date required. */
export const eventCreate = createInsertSchema(events, refinements)
  .pick(writable)
  .extend(media)
  .meta({ id: "EventCreate" });

/** PUT body: any subset; a new `dates` array replaces the old one. */
export const eventUpdate = createUpdateSchema(events, refinements)
  .pick(writable)
  .extend(media)
  .meta({ id: "EventUpdate" });

export type EventCreate = z.output<typeof eventCreate>;
export type EventUpdate = z.output<typeof eventUpdate>;

const occurrenceJson = z.object({ start: z.iso.datetime(), end: z.iso.datetime() });

/** An event as the API returns it. */
export const eventJson = createSelectSchema(events, { tags: z.array(z.string()), dates: z.array(occurrenceJson) })
  .pick({ id: true, ...writable })
  .extend({
    media_url: z.string().nullable(),
    created_at: z.iso.datetime(),
    updated_at: z.iso.datetime(),
    ...writtenByJson,
  })
  .meta({ id: "Event" });

export type EventJson = z.output<typeof eventJson>;

/** An event in a search answer: with `latitude`/`longitude`, its pinpoint's distance from that point. */
export const foundEventJson = eventJson
  .extend({
    distance: z
      .number()
      .optional()
      .meta({ description: "Metres from `latitude`/`longitude` to the event's pinpoint; only when they are given" }),
  })
  .meta({ id: "EventResult" });

/** An event in GeoJSON: a Feature at its pinpoint's location (null only if the pinpoint vanished meanwhile). */
export const eventFeatureJson = featureSchema(eventJson.omit({ id: true }), pointSchema.nullable()).meta({
  id: "EventFeature",
});

/** A page of events in GeoJSON. */
export const eventFeatureCollectionJson = featureCollectionSchema(
  featureSchema(foundEventJson.omit({ id: true }), pointSchema.nullable()).meta({ id: "EventResultFeature" }),
).meta({ id: "EventFeatureCollection" });
