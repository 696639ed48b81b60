/**
 * Publishable keys on requests (docs/publishing-maps.md): a `pk_…` key,
 * sent as a Bearer credential or as `?key=`, reads what it publishes
 * (src/db/published.ts) on the operations that accept one, from the web
 * origins it allows.
 *
 * A key (from the directory) and the newest changes of its account's shard's
 * log (its account's, and the newest of any category, the one content every
 * account reads) are read in two indexed queries
 * and kept per isolate for FRESH_MS, so a request
 * with a known key, a cache hit included, reads no database. That lifetime
 * bounds how long a revoked key keeps working and how long a cached answer
 * outlives a write (those changes version every cached answer:
 * src/http/middleware/public-cache.ts). An entry is read again in the background once
 * it is REFRESH_MS old, so requests rarely wait for it.
 *
 * A request that has to read a key counts against the viewer's address
 * first, and so does one whose key was found unknown by another's read: an
 * address guessing keys is refused before it costs a read
 * (src/http/middleware/rate-limit.ts `limitKeyLookup`).
 */
import { sql } from "drizzle-orm";
import type { Context } from "hono";
import { clock } from "../core/clock";
import type { AppEnv, KeyPrincipal } from "../core/env";
import { ApiError } from "../core/problem";
import { originAllowed } from "../core/publishable-keys";
import { hashSecret } from "../core/secrets";
import { currentBookmark, useAccount } from "../db/client";
import { rawRows } from "../db/search/raw-rows";
import { limitKeyLookup } from "../http/middleware/rate-limit";

/** How long an isolate trusts what it read of a key, and when it starts reading it again. */
export const FRESH_MS = 1000;
const REFRESH_MS = 750;
const MAX_ENTRIES = 10_000;

/** What a key is, as read: `key` null if there is no such key (revoked ones are deleted). */
type Versions = Pick<KeyPrincipal, "head" | "categoriesHead" | "bookmark">;
type Entry = { key: (Omit<KeyPrincipal, keyof Versions> & { origins: readonly string[] | null }) | null } & Versions;
/** Only reads that have ended: a request never waits on a read another request started (src/db/shards.ts `placementOf` says why). */
type Cached = { entry: Entry; fetchedAt: number; refreshing: boolean };

const cache = new Map<string, Cached>();

/** A change as `seq.changed_at`: never the same for two states, even of a restored database that reuses `seq`. */
const version = (seq: ReturnType<typeof sql>) => sql`(SELECT seq || '.' || changed_at FROM changes WHERE seq = ${seq})`;

/** The account's newest change: an index seek on changes_account_idx. */
const accountHead = (accountId: number) => version(sql`(SELECT max(seq) FROM changes WHERE account_id = ${accountId})`);

/**
 * The newest change of any category, whoever's: every account reads every category, so they are the one
 * content whose changes another account's answers may show. Only categories' entries, never the log's
 * newest, which every account's writes move: a cached answer renewed by any write would tell a key's
 * readers when others write (Cache-Status). The categories' range of changes_object_idx (the index holds
 * each entry's seq), which a plain max() would skip for a backward walk over the whole log.
 */
const categoriesHead = version(
  sql`(SELECT max(seq) FROM changes INDEXED BY changes_object_idx WHERE type = 'category')`,
);

async function load(d1: D1Database, key: string): Promise<Entry> {
  const [row] = await rawRows(
    d1,
    sql`SELECT k.id, k.account_id, k.every_list, k.origins, k.expires_at, substr(k.key_hash, 1, 16) AS tag,
      (SELECT json_group_array(list_id) FROM publishable_key_lists WHERE key_id = k.id) AS lists
      FROM publishable_keys AS k WHERE k.key_hash = ${await hashSecret(key)}`,
  );
  if (!row) return { key: null, head: "", categoriesHead: "", bookmark: currentBookmark() };
  // The key is the directory's, the change log its account's: a second query, on the account's database.
  await useAccount(Number(row.account_id));
  const [heads] = await rawRows(
    d1,
    sql`SELECT ${accountHead(Number(row.account_id))} AS head, ${categoriesHead} AS categories_head`,
  );
  return {
    key: {
      kind: "key",
      keyId: Number(row.id),
      accountId: Number(row.account_id),
      scopes: ["read"],
      lists: row.every_list ? null : (JSON.parse(String(row.lists)) as number[]),
      origins: row.origins === null ? null : (JSON.parse(String(row.origins)) as string[]),
      expiresAt: row.expires_at === null ? null : Number(row.expires_at),
      tag: String(row.tag),
    },
    head: String(heads?.head ?? "0"),
    categoriesHead: String(heads?.categories_head ?? "0"),
    bookmark: currentBookmark(),
  };
}

/** Reads the key now and keeps what it read. */
async function fetchEntry(d1: D1Database, key: string): Promise<Entry> {
  const fetchedAt = clock.now();
  const entry = await load(d1, key);
  if (cache.size >= MAX_ENTRIES) cache.clear();
  cache.set(key, { entry, fetchedAt, refreshing: false });
  return entry;
}

/** Reads the key again, keeping the entry it replaces in use until the new read is in. */
async function refreshEntry(d1: D1Database, key: string): Promise<void> {
  const started = clock.now();
  const entry = await load(d1, key);
  cache.set(key, { entry, fetchedAt: started, refreshing: false });
}

/**
 * The key as stored, read at most FRESH_MS ago; `beforeRead` runs before this
 * request reads it (and may refuse the read by throwing). Past REFRESH_MS,
 * this request still uses the entry and `waitUntil` carries a new read that
 * replaces it.
 */
async function lookUp(
  d1: D1Database,
  key: string,
  waitUntil: (promise: Promise<unknown>) => void,
  beforeRead: () => Promise<void>,
): Promise<Entry> {
  const cached = cache.get(key);
  const age = cached ? clock.now() - cached.fetchedAt : Infinity;
  if (!cached || age >= FRESH_MS) {
    await beforeRead();
    return fetchEntry(d1, key);
  }
  if (age >= REFRESH_MS && !cached.refreshing) {
    cached.refreshing = true;
    waitUntil(
      refreshEntry(d1, key).catch(() => {
        cached.refreshing = false;
      }),
    );
  }
  return cached.entry;
}

/** `pk_` and base64url: anything else cannot be a key, and is refused before any lookup. */
export const KEY_SHAPE = /^pk_[A-Za-z0-9_-]{20,100}$/;

export type ResolvedKey = KeyPrincipal & { origins: readonly string[] | null };

/**
 * The key of a request; 401 if it is unknown, revoked or expired. Counted
 * against the viewer's address (429 over its limit) before this request
 * reads the key, or when the key was found unknown without a read; a key
 * that cannot be one (KEY_SHAPE) is refused without either.
 */
export async function authenticateKey(c: Context<AppEnv>, key: string): Promise<ResolvedKey> {
  const unknown = "The publishable key is unknown or was revoked.";
  if (!KEY_SHAPE.test(key)) throw invalidKey(unknown);
  const waitUntil = (promise: Promise<unknown>) => c.executionCtx.waitUntil(promise);
  let counted = false;
  const entry = await lookUp(c.env.DB, key, waitUntil, () => {
    counted = true;
    return limitKeyLookup(c);
  });
  const found = entry.key;
  if (!found) {
    if (!counted) await limitKeyLookup(c);
    throw invalidKey(unknown);
  }
  if (found.expiresAt !== null && found.expiresAt <= clock.now()) throw invalidKey("The publishable key has expired.");
  return { ...found, head: entry.head, categoriesHead: entry.categoriesHead, bookmark: entry.bookmark };
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
