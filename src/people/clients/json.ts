/** The one mapping from a client to its public JSON. */
import type { StoredClient } from "../../db/client-registry";
import type { ClientJson } from "./schemas";
import type { ClientRow } from "./store";

/** A client as paged (`ClientRow`) or as the registry's writes return it (`StoredClient`). */
export function clientToJson(client: ClientRow | StoredClient): ClientJson {
  const row =
    "client_id" in client
      ? {
          ...client,
          id: client.client_id,
          revoked_at: client.revoked_at === null ? null : new Date(client.revoked_at),
          created_at: new Date(client.created_at),
          updated_at: new Date(client.updated_at),
        }
      : client;
  return {
    id: row.id,
    name: row.name,
    scope: row.scope,
    secret_version: row.secret_version,
    status: row.revoked_at === null ? "active" : "revoked",
    revoked_at: row.revoked_at?.toISOString() ?? null,
    created_at: row.created_at.toISOString(),
    updated_at: row.updated_at.toISOString(),
  };
}
