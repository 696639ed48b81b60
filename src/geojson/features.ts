/**
 * GeoJSON (RFC 7946) representations of the API's resources: a pinpoint is a
 * Feature with a Point at `[longitude, latitude]` (altitude third when set)
 * and its other fields as properties; an event is a Feature at its pinpoint's
 * location; a page is a FeatureCollection whose links carry the page's own
 * next/previous URLs. Pure functions over the plain JSON each resource
 * already returns, so both representations cannot disagree on a field. The
 * shapes are zod schemas, from which the types here and each resource's
 * documented Feature (its JSON schema's fields as properties) are built.
 */
import * as z from "zod";

export const GEOJSON = "application/geo+json";

/** `[longitude, latitude]`, or with the altitude third. */
const position = z.union([z.tuple([z.number(), z.number()]), z.tuple([z.number(), z.number(), z.number()])]);

export const pointSchema = z
  .object({ type: z.literal("Point"), coordinates: position })
  .meta({ id: "Point", description: "`[longitude, latitude]`, altitude third when the pinpoint has one" });

/** OGC API and RFC 8288 style link; `type` is always given (OGC /req/core/fc-links). */
export const linkSchema = z
  .object({ href: z.url(), rel: z.string(), type: z.string(), title: z.string().optional() })
  .meta({ id: "Link" });

/** A Feature whose properties are `properties` (a resource's JSON less what the geometry carries). */
export const featureSchema = <Properties extends z.ZodType>(
  properties: Properties,
  geometry: z.ZodType = pointSchema,
) =>
  z.object({
    type: z.literal("Feature"),
    id: z.number().int(),
    geometry,
    properties,
    links: z.array(linkSchema).optional(),
  });

/** A page of features, with its `self`, `next`, `prev` and `alternate` links. */
export const featureCollectionSchema = <Feature extends z.ZodType>(feature: Feature) =>
  z.object({ type: z.literal("FeatureCollection"), features: z.array(feature), links: z.array(linkSchema) });

export type Position = z.output<typeof position>;
export type Point = z.output<typeof pointSchema>;
export type Link = z.output<typeof linkSchema>;
export type Feature = {
  type: "Feature";
  id: number;
  geometry: Point | null;
  properties: Record<string, unknown>;
  links?: Link[];
};
export type FeatureCollection = {
  type: "FeatureCollection";
  features: Feature[];
  links: Link[];
  [member: string]: unknown;
};

/** Where a feature is: a pinpoint's coordinates, altitude included when it has one. */
export type Location = { latitude: number; longitude: number; altitude: number | null };

export function point({ latitude, longitude, altitude }: Location): Point {
  return { type: "Point", coordinates: altitude === null ? [longitude, latitude] : [longitude, latitude, altitude] };
}

/** A pinpoint's JSON as a Feature: coordinates move into the geometry, everything else into properties. */
export function pinpointFeature(pinpoint: { id: number } & Location & Record<string, unknown>): Feature {
  const { id, latitude, longitude, altitude, ...properties } = pinpoint;
  return { type: "Feature", id, geometry: point({ latitude, longitude, altitude }), properties };
}

/**
 * An event's JSON as a Feature at its pinpoint's location (`null` geometry
 * only if the pinpoint vanished between the two reads).
 */
export function eventFeature(event: { id: number } & Record<string, unknown>, at: Location | undefined): Feature {
  const { id, ...properties } = event;
  return { type: "Feature", id, geometry: at ? point(at) : null, properties };
}

/** A page's URL as the same page in GeoJSON: the `format` parameter keeps the representation across links. */
export function geojsonHref(href: string): string {
  const url = new URL(href);
  url.searchParams.set("format", "geojson");
  return url.toString();
}

/** Links of a page: itself, and its neighbours when there are any. */
export function pageLinks(self: string, next: string | null, previous: string | null): Link[] {
  return [
    { href: geojsonHref(self), rel: "self", type: GEOJSON },
    ...(next ? [{ href: geojsonHref(next), rel: "next", type: GEOJSON }] : []),
    ...(previous ? [{ href: geojsonHref(previous), rel: "prev", type: GEOJSON }] : []),
  ];
}

export function featureCollection(features: Feature[], links: Link[]): FeatureCollection {
  return { type: "FeatureCollection", features, links };
}
