/** The one mapping from a stored publishable key to its public JSON. */
import type { PublishableKey } from "../db/schema";
import type { KeyJson } from "./schemas";

export function keyToJson(row: PublishableKey, lists: readonly number[]): KeyJson {
  return {
    id: row.id,
    name: row.name,
    key_prefix: row.key_prefix,
    lists: row.every_list ? null : [...lists],
    origins: row.origins,
    expires_at: row.expires_at?.toISOString() ?? null,
    created_at: row.created_at.toISOString(),
  };
}
