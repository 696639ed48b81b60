/** The one mapping from a stored pinpoint to its public JSON. */
import type { Actors } from "../auth/actor";
import type { Pinpoint } from "../db/schema";
import type { MediaUrl } from "../media/url";
import type { PinpointJson } from "./schemas";

export function pinpointToJson(row: Pinpoint, mediaUrl: MediaUrl, actors: Actors): PinpointJson {
  return {
    id: row.id,
    name: row.name,
    address: row.address,
    altitude: row.altitude,
    category: row.category,
    description: row.description,
    latitude: row.latitude,
    longitude: row.longitude,
    media_credits: row.media_credits,
    media_url: mediaUrl(row.media_key),
    tags: row.tags,
    created_at: row.created_at.toISOString(),
    updated_at: row.updated_at.toISOString(),
    ...actors.of(row),
  };
}
