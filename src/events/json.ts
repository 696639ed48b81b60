/** The one mapping from a stored event to its public JSON. */
import type { Actors } from "../auth/actor";
import type { Event } from "../db/schema";
import type { MediaUrl } from "../media/url";
import { formatInstant } from "./dates";
import type { EventJson } from "./schemas";

export function eventToJson(row: Event, mediaUrl: MediaUrl, actors: Actors): EventJson {
  return {
    id: row.id,
    name: row.name,
    description: row.description,
    dates: row.dates.map(({ start, end }) => ({ start: formatInstant(start), end: formatInstant(end) })),
    media_credits: row.media_credits,
    media_url: mediaUrl(row.media_key),
    tags: row.tags,
    pinpoint: row.pinpoint,
    created_at: row.created_at.toISOString(),
    updated_at: row.updated_at.toISOString(),
    ...actors.of(row),
  };
}
