/**
 * Request and response shapes of pinpoints, derived from the `pinpoints`
 * table: drizzle-zod reads types and nullability from the columns, and the
 * refinements below add the API's bounds (CONTRACT "Resources").
 */
import { createInsertSchema, createSelectSchema, createUpdateSchema } from "drizzle-zod";
import * as z from "zod";
import { writtenByJson } from "../auth/actor";
import { pinpoints } from "../db/schema";
import * as field from "../fields/schemas";
import { featureCollectionSchema, featureSchema } from "../geojson/features";
import { mediaFile } from "../media/file";

const between = (min: number, max: number) => `must be between ${min} and ${max}`;

/** Where a pinpoint is; a GeoJSON import reads them from its Points' coordinates. */
export const location = {
  latitude: z.number().min(-90, between(-90, 90)).max(90, between(-90, 90)),
  longitude: z.number().min(-180, between(-180, 180)).max(180, between(-180, 180)),
  altitude: z.number().min(-20_000, between(-20_000, 100_000)).max(100_000, between(-20_000, 100_000)),
};

const refinements = {
  // Required on create, optional on update: refined from the column's own schema.
  name: () => field.name,
  latitude: () => location.latitude,
  longitude: () => location.longitude,
  // Optional everywhere; `null` clears.
  address: field.text(500).optional(),
  altitude: location.altitude.nullable().optional(),
  category: field.id.nullable().optional(),
  description: field.description.optional(),
  media_credits: field.text(1000).optional(),
  tags: field.tags.optional(),
};

/** Fields a client may send; anything else in the body is ignored. */
const writable = {
  name: true,
  address: true,
  altitude: true,
  category: true,
  description: true,
  latitude: true,
  longitude: true,
  media_credits: true,
  tags: true,
} as const;

/** The upload is request-only: the row keeps its R2 key, responses carry `media_url`. */
const upload = { media_file: mediaFile.nullable().optional() };

/** POST body: name, latitude and longitude required. */
export const pinpointCreate = createInsertSchema(pinpoints, refinements)
  .pick(writable)
  .extend(upload)
  .meta({ id: "PinpointCreate" });

/** PUT body: any subset; `null` clears an optional field (`"media_file": null` deletes the media). */
export const pinpointUpdate = createUpdateSchema(pinpoints, refinements)
  .pick(writable)
  .extend(upload)
  .meta({ id: "PinpointUpdate" });

export type PinpointCreate = z.output<typeof pinpointCreate>;
export type PinpointUpdate = z.output<typeof pinpointUpdate>;

/** A pinpoint as the API returns it. */
export const pinpointJson = createSelectSchema(pinpoints, { tags: z.array(z.string()) })
  .pick({ id: true, ...writable })
  .extend({
    media_url: z.string().nullable(),
    created_at: z.iso.datetime(),
    updated_at: z.iso.datetime(),
    ...writtenByJson,
  })
  .meta({ id: "Pinpoint" });

export type PinpointJson = z.output<typeof pinpointJson>;

/** A pinpoint in a search answer: with `latitude`/`longitude`, its distance from that point. */
export const foundPinpointJson = pinpointJson
  .extend({
    distance: z
      .number()
      .optional()
      .meta({ description: "Metres from `latitude`/`longitude` along the great circle; only when they are given" }),
  })
  .meta({ id: "PinpointResult" });

export type FoundPinpointJson = z.output<typeof foundPinpointJson>;

/** The fields GeoJSON carries in a Feature's geometry rather than its properties. */
const inGeometry = { id: true, latitude: true, longitude: true, altitude: true } as const;

/** A pinpoint in GeoJSON (`Accept: application/geo+json`): its JSON, the location in the geometry. */
export const pinpointFeatureJson = featureSchema(pinpointJson.omit(inGeometry)).meta({ id: "PinpointFeature" });

/** A page of pinpoints in GeoJSON. */
export const pinpointFeatureCollectionJson = featureCollectionSchema(
  featureSchema(foundPinpointJson.omit(inGeometry)).meta({ id: "PinpointResultFeature" }),
).meta({ id: "PinpointFeatureCollection" });
