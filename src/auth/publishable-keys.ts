/**
 * Publishable keys on requests (README "Publishing a map"): a `pk_…` key,
 * sent as a Bearer credential or as `?key=`, reads what it publishes
 * (src/db/published.ts) on the operations that accept one, from the web
 * origins it allows.
 *
 * A key and the change-log heads (its account's and the whole log's) are read in one indexed query and
 * kept per isolate for FRESH_MS, so a request with a known key, a cache hit
 * included, reads no database. That lifetime bounds how long a revoked key
 * keeps working and how long a cached answer outlives a write (the head
 * versions every cached answer: src/http/public-cache.ts).
 */
import { sql } from "drizzle-orm";
import { clock } from "../core/clock";
import type { Context } from "hono";
import type { AppEnv, KeyPrincipal } from "../core/env";
import { ApiError } from "../core/problem";
import { originAllowed } from "../core/publishable-keys";
import { hashSecret } from "../core/secrets";
import { rawRows } from "../db/raw-rows";
import { limitUnknownKey } from "../http/rate-limit";

/** How long an isolate trusts what it read of a key. */
export const FRESH_MS = 1000;
const MAX_ENTRIES = 10_000;

/** What a key is, as read: null if no such key. */
type Heads = Pick<KeyPrincipal, "head" | "sharedHead">;
type Entry = { key: (Omit<KeyPrincipal, keyof Heads> & { origins: readonly string[] | null }) | null } & Heads;
type Cached = { entry: Promise<Entry>; fetchedAt: number };

const cache = new Map<string, Cached>();

async function load(d1: D1Database, key: string): Promise<Entry> {
  const [row] = await rawRows(
    d1,
    sql`SELECT k.id, k.account_id, k.every_list, k.origins, k.expires_at,
      (SELECT json_group_array(list_id) FROM publishable_key_lists WHERE key_id = k.id) AS lists,
      (SELECT coalesce(max(seq), 0) FROM changes WHERE account_id = k.account_id) AS head,
      (SELECT coalesce(max(seq), 0) FROM changes) AS shared_head
      FROM publishable_keys AS k WHERE k.key_hash = ${await hashSecret(key)}`,
  );
  if (!row) return { key: null, head: 0, sharedHead: 0 };
  return {
    key: {
      kind: "key",
      keyId: Number(row.id),
      accountId: Number(row.account_id),
      scopes: ["read"],
      lists: row.every_list ? null : (JSON.parse(String(row.lists)) as number[]),
      origins: row.origins === null ? null : (JSON.parse(String(row.origins)) as string[]),
      expiresAt: row.expires_at === null ? null : Number(row.expires_at),
    },
    head: Number(row.head),
    sharedHead: Number(row.shared_head),
  };
}

/** The key as stored, at most FRESH_MS old; null if there is no such key (revoked ones are deleted). */
async function lookUp(d1: D1Database, key: string): Promise<Entry> {
  const now = clock.now();
  const cached = cache.get(key);
  if (cached && now - cached.fetchedAt < FRESH_MS) return cached.entry;
  if (cache.size >= MAX_ENTRIES) cache.clear();
  const entry = load(d1, key);
  cache.set(key, { entry, fetchedAt: now });
  entry.catch(() => cache.delete(key));
  return entry;
}

/** `pk_` and base64url: anything else cannot be a key, and is refused before any lookup. */
export const KEY_SHAPE = /^pk_[A-Za-z0-9_-]{20,100}$/;

export type ResolvedKey = KeyPrincipal & { origins: readonly string[] | null };

/** The key's principal; 401 if the key is unknown, revoked or expired. */
export async function resolvePublishableKey(d1: D1Database, key: string): Promise<ResolvedKey> {
  const entry = KEY_SHAPE.test(key) ? await lookUp(d1, key) : null;
  const found = entry?.key;
  if (!entry || !found) throw invalidKey("The publishable key is unknown or was revoked.");
  if (found.expiresAt !== null && found.expiresAt <= clock.now()) throw invalidKey("The publishable key has expired.");
  return { ...found, head: entry.head, sharedHead: entry.sharedHead };
}

/** The key of a request; a key that is none counts against the address (guessing is limited as use is), then 401. */
export async function authenticateKey(c: Context<AppEnv>, key: string): Promise<ResolvedKey> {
  try {
    return await resolvePublishableKey(c.env.DB, key);
  } catch (error) {
    await limitUnknownKey(c);
    throw error;
  }
}

function invalidKey(detail: string): ApiError {
  return new ApiError("invalid_token", detail, {
    headers: { "WWW-Authenticate": `Bearer realm="api", error="invalid_token", error_description="${detail}"` },
  });
}

/**
 * The web origin a request comes from: its `Origin`, or without one (a
 * same-origin GET, an `<img>`, an iframe's page load) its `Referer`'s origin.
 */
export function requestOrigin(request: Request): string | null {
  const origin = request.headers.get("Origin");
  if (origin !== null) return origin;
  const referer = request.headers.get("Referer");
  if (referer === null || !URL.canParse(referer)) return null;
  return new URL(referer).origin;
}

/**
 * 403 unless the request comes from an origin the key allows (any, for a key
 * without origins), or from this API's own origin: the map page
 * (/maps/{list_id}, src/maps/) runs there, inside a frame only the key's
 * origins may show (frame-ancestors) and loaded only from them, and its own
 * requests name that origin.
 */
export function assertOriginAllowed(key: ResolvedKey, request: Request): void {
  if (key.origins === null) return;
  const origin = requestOrigin(request);
  if (origin === new URL(request.url).origin || originAllowed(key.origins, origin)) return;
  throw new ApiError(
    "forbidden",
    origin === null
      ? "This publishable key is limited to certain web origins, and the request names none (no Origin or Referer)."
      : `This publishable key is not allowed on the web origin ${origin}.`,
  );
}
