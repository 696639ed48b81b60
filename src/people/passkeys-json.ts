/** The one mapping from a stored passkey to the JSON its person sees. */
import type { PasskeyJson } from "./passkeys-schemas";
import type { Passkey } from "./passkeys-store";

export function passkeyToJson(row: Passkey): PasskeyJson {
  return {
    id: row.id,
    name: row.name,
    transports: row.transports ?? [],
    created_at: row.created_at.toISOString(),
    last_used_at: row.last_used_at?.toISOString() ?? null,
  };
}
