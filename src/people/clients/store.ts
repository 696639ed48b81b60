/**
 * An account's clients from a person's session: the page read here; the
 * writes are the registration tool's (src/db/client-registry.ts), run on the
 * directory in one transaction each (src/db/fills.ts `batchOn`).
 */
import { and, eq } from "drizzle-orm";
import { database } from "../../db/client";
import { keyset, type Bound } from "../../db/keyset";
import { clients } from "../../db/schema";

export type ClientRow = {
  id: string;
  name: string;
  scope: string;
  secret_version: number;
  revoked_at: Date | null;
  created_at: Date;
  updated_at: Date;
};

/** The order of a page: oldest first, the id telling apart clients made in the same millisecond. */
export const clientKey = (row: ClientRow) => [row.created_at.getTime(), row.id];

/** One keyset page of the account's clients, revoked ones included. Never a secret or its hash. */
export async function pageClients(d1: D1Database, accountId: number, bound: Bound, take: number): Promise<ClientRow[]> {
  const { where, orderBy } = keyset([clients.created_at, clients.id], bound);
  return database(d1)
    .select({
      id: clients.id,
      name: clients.name,
      scope: clients.scope,
      secret_version: clients.secret_version,
      revoked_at: clients.revoked_at,
      created_at: clients.created_at,
      updated_at: clients.updated_at,
    })
    .from(clients)
    .where(and(eq(clients.account_id, accountId), where))
    .orderBy(...orderBy)
    .limit(take);
}
