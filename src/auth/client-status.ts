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

/** The client's current secret version, or null if revoked or gone. */
type Entry = { version: number | null; fetchedAt: number; refreshing: Promise<Entry> | null };

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
    refreshing: null,
  };
  if (cache.size >= MAX_ENTRIES) cache.clear();
  cache.set(clientId, entry);
  return entry;
}

function refresh(db: D1Database, clientId: string, entry: Entry | undefined): Promise<Entry> {
  if (entry?.refreshing) return entry.refreshing;
  const pending = load(db, clientId).finally(() => {
    if (entry) entry.refreshing = null;
  });
  if (entry) entry.refreshing = pending;
  return pending;
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
    entry = await refresh(db, clientId, entry);
  } else if (age >= FRESH_MS) {
    waitUntil(refresh(db, clientId, entry).catch(() => undefined));
  }
  return entry.version === version;
}
