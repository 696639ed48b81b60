/**
 * GeoJSON (RFC 7946) representations of the API's resources: a pinpoint is a
 * Feature with a Point at `[longitude, latitude]` (altitude third when set)
 * and its other fields as properties; an event is a Feature at its pinpoint's
 * location; a page is a FeatureCollection whose links carry the page's own
 * next/previous URLs. Pure functions over the plain JSON each resource
 * already returns, so both representations cannot disagree on a field.
 */

export const GEOJSON = "application/geo+json";

export type Position = [number, number] | [number, number, number];
export type Point = { type: "Point"; coordinates: Position };
/** OGC API and RFC 8288 style link; `type` is always given (OGC /req/core/fc-links). */
export type Link = { href: string; rel: string; type: string; title?: string };
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
