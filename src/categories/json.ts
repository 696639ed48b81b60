/** The one mapping from a stored category to its public JSON. */
import type { Actors } from "../auth/actor";
import type { Category } from "../db/schema";
import type { MediaUrl } from "../media/url";
import type { CategoryJson } from "./schemas";

export function categoryToJson(row: Category, mediaUrl: MediaUrl, actors: Actors): CategoryJson {
  return {
    id: row.id,
    name: row.name,
    image_url: mediaUrl(row.image_key),
    created_at: row.created_at.toISOString(),
    updated_at: row.updated_at.toISOString(),
    ...actors.of(row),
  };
}
