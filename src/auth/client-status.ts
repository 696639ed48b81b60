/**
 * Whether a token's client is still in good standing: not revoked, and its
 * secret not rotated since the token was issued. Kept in a per-isolate cache
 * so token verification reads no database on the hot path; an entry is
 * refreshed in the background after FRESH_MS and never trusted past
 * MAX_AGE_MS, which bounds how long a revoked client's tokens keep working.
 */
import { eq } from "drizzle-orm";
import { clock } from "../core/clock";
import { database } from "../db/client";
import { clients } from "../db/schema";

export const FRESH_MS = 30_000;
export const MAX_AGE_MS = 60_000;
const MAX_ENTRIES = 10_000;

/**
 * The client's current secret version, or null if revoked or gone. Only reads that have ended are kept:
 * a request never waits on a read another request started (src/db/shards.ts `placementOf` says why).
 */
type Entry = { version: number | null; fetchedAt: number; refreshing: boolean };

const cache = new Map<string, Entry>();

async function load(db: D1Database, clientId: string): Promise<Entry> {
  const row = await database(db)
    .select({ version: clients.secret_version, revokedAt: clients.revoked_at })
    .from(clients)
    .where(eq(clients.id, clientId))
    .get();
  const entry: Entry = {
    version: row && !row.revokedAt ? row.version : null,
    fetchedAt: clock.now(),
    refreshing: false,
  };
  if (cache.size >= MAX_ENTRIES) cache.clear();
  cache.set(clientId, entry);
  return entry;
}

/** Reads the entry again in the background, once at a time. */
function refreshLater(db: D1Database, clientId: string, entry: Entry, waitUntil: (promise: Promise<unknown>) => void) {
  if (entry.refreshing) return;
  entry.refreshing = true;
  waitUntil(
    load(db, clientId).then(
      () => undefined,
      () => {
        entry.refreshing = false;
      },
    ),
  );
}

/**
 * True when tokens of `clientId` issued at secret version `version` are still
 * good. `waitUntil` lets a background refresh outlive the response.
 */
export async function clientInGoodStanding(
  db: D1Database,
  clientId: string,
  version: number,
  waitUntil: (promise: Promise<unknown>) => void,
): Promise<boolean> {
  let entry = cache.get(clientId);
  const age = entry ? clock.now() - entry.fetchedAt : Infinity;
  // A validly signed token newer than the cached secret version proves the entry stale
  // (the secret was rotated and a new token issued): reload now rather than reject it.
  const outdated = entry?.version != null && version > entry.version;
  if (!entry || age >= MAX_AGE_MS || outdated) {
    entry = await load(db, clientId);
  } else if (age >= FRESH_MS) {
    refreshLater(db, clientId, entry, waitUntil);
  }
  return entry.version === version;
}
