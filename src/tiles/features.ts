/**
 * A tile's features, the same for its MVT and GeoJSON forms, in MapLibre's
 * clustering conventions so its cluster styles work unchanged: a place has
 * `id`, `name`, `category` and `tags` (comma-separated); a cluster has
 * `cluster: true`, `cluster_id` (its feature id too), `point_count` and
 * `point_count_abbreviated`, and is drawn at the centroid of its places,
 * which lies in its bin and so in the tile.
 */
import type { Feature } from "../geojson/features";
import type { Bin } from "../db/search/tile-cells";
import { abbreviated, clusterId, latitudeOf, longitudeOf, pixel, type Tile } from "./grid";
import type { MvtFeature, MvtValue } from "./mvt";
import type { TileContent, TilePlace } from "./source";

/** One feature: where it is in the tile and as longitude/latitude, its id and properties. */
export type TileFeature = {
  id: number;
  x: number;
  y: number;
  longitude: number;
  latitude: number;
  properties: Record<string, MvtValue | null>;
};

type PlaceLike = Pick<TilePlace, "id" | "name" | "category" | "tags" | "latitude" | "longitude">;

function placeFeature(tile: Tile, place: PlaceLike, qx: number, qy: number): TileFeature {
  return {
    id: place.id,
    x: pixel(qx, tile.z, tile.x),
    y: pixel(qy, tile.z, tile.y),
    longitude: place.longitude,
    latitude: place.latitude,
    properties: { id: place.id, name: place.name, category: place.category, tags: place.tags },
  };
}

function binFeature(tile: Tile, bin: Bin, binLevel: number): TileFeature {
  if (bin.places === 1 && bin.place) return placeFeature(tile, bin.place, bin.sumX, bin.sumY);
  const [cx, cy] = [bin.sumX / bin.places, bin.sumY / bin.places];
  const id = clusterId(bin.key, binLevel);
  return {
    id,
    x: pixel(cx, tile.z, tile.x),
    y: pixel(cy, tile.z, tile.y),
    longitude: longitudeOf(cx),
    latitude: latitudeOf(cy),
    properties: {
      cluster: true,
      cluster_id: id,
      point_count: bin.places,
      point_count_abbreviated: abbreviated(bin.places),
    },
  };
}

export function tileFeatures(tile: Tile, content: TileContent): TileFeature[] {
  return content.kind === "bins"
    ? content.bins.map((bin) => binFeature(tile, bin, content.binLevel))
    : content.places.map((place) => placeFeature(tile, place, place.qx, place.qy));
}

/** For the MVT encoder: tile coordinates, and no property that is null (MVT has no null). */
export const mvtFeatures = (features: readonly TileFeature[]): MvtFeature[] =>
  features.map(({ id, x, y, properties }) => ({
    id,
    x,
    y,
    properties: Object.fromEntries(Object.entries(properties).filter(([, v]) => v !== null)) as Record<
      string,
      MvtValue
    >,
  }));

/** As GeoJSON: a place at its own longitude and latitude, a cluster at its centroid's. */
export const geojsonFeatures = (features: readonly TileFeature[]): Feature[] =>
  features.map(({ id, longitude, latitude, properties }) => ({
    type: "Feature",
    id,
    geometry: { type: "Point", coordinates: [longitude, latitude] },
    properties,
  }));
