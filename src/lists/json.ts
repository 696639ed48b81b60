/** The one mapping from a stored list to its public JSON. */
import type { Actors } from "../auth/actor";
import type { List } from "../db/schema";
import type { ListJson } from "./schemas";

export function listToJson(row: List, actors: Actors): ListJson {
  return {
    id: row.id,
    name: row.name,
    description: row.description,
    created_at: row.created_at.toISOString(),
    updated_at: row.updated_at.toISOString(),
    ...actors.of(row),
  };
}
