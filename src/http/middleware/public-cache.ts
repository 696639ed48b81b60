/**
 * Answers to publishable keys, cached near the viewer (docs/operations.md
 * "Public caching"). Every viewer of a key sees the same bytes, so a read is
 * stored in the Cache API of the Cloudflare location that served it, under a
 * key made of the publishable key, the account's newest change (which every
 * write of the account moves: db/schema.ts `changes`; for answers that show
 * every account's categories, the newest change of any category, never the
 * whole log's, which would renew them at every write of any account and so
 * tell their readers, by `Cache-Status`, when others write), the deployed
 * version and the request.
 * A write therefore never needs a purge: the next lookup of the key reads a
 * new head and so a new cache key, and old entries are never read again.
 *
 * The Worker runs on every request, hits included, so a hit skips no check:
 * the key is known and unexpired, its origins allow the page, and the
 * viewer's rate limit counts it. A hit reads no database.
 *
 * Browsers may keep an answer briefly (`max-age`, `stale-while-revalidate`),
 * never past the key's expiry; `Vary` covers what the answer depends on
 * beyond the URL. Answers to access tokens are never stored here.
 */
import type { Context } from "hono";
import { createMiddleware } from "hono/factory";
import { clock } from "../../core/clock";
import { base64urlEncode } from "../../core/crypto";
import type { AppEnv, KeyPrincipal } from "../../core/env";
import { runFromBookmark } from "../../db/client";
import { noneMatch } from "../etag";
import { matchedOperation } from "../route-metadata";

/** How long a browser may reuse an answer, then serve it stale while it asks again (seconds). */
export const BROWSER_MAX_AGE = 2;
export const BROWSER_STALE = 2;
/** How long a location keeps an entry: long, since a write changes the cache key instead of waiting this out. */
const STORED_SECONDS = 3600;
/** RFC 9211: the cache that answered, in the Cache-Status header. */
const CACHE_NAME = "poi-public";

/** The answer depends on the representation asked for (JSON or GeoJSON) and, for CORS, the page's origin. */
const VARY = "Accept, Origin";

function cacheKey(c: Context<AppEnv>, key: KeyPrincipal): Request {
  // An answer that shows other accounts' content (categories) is renewed by any account's category write.
  const version = matchedOperation(c)?.publishable === "across-accounts" ? `c${key.categoriesHead}` : `a${key.head}`;
  const url = new URL(c.req.url);
  url.searchParams.delete("key");
  url.searchParams.sort();
  const deployed = c.env.CF_VERSION_METADATA?.id ?? "local";
  const accept = encodeURIComponent(c.req.header("Accept") ?? "");
  return new Request(
    `${url.origin}/.public-cache/${deployed}/${key.keyId}.${key.tag}/${version}/${accept}${url.pathname}${url.search}`,
  );
}

/** What a browser may do with the answer: reuse it briefly, never past the key's expiry. */
function browserCaching(key: KeyPrincipal): string {
  const left = key.expiresAt === null ? Infinity : Math.floor((key.expiresAt - clock.now()) / 1000);
  const maxAge = Math.max(0, Math.min(BROWSER_MAX_AGE, left));
  const stale = Math.max(0, Math.min(BROWSER_STALE, left - maxAge));
  return `public, max-age=${maxAge}${stale > 0 ? `, stale-while-revalidate=${stale}` : ""}`;
}

/** A strong ETag for a collection's answer, which has no version of its own: a digest of its bytes. */
async function digestTag(body: ArrayBuffer): Promise<string> {
  const digest = new Uint8Array(await crypto.subtle.digest("SHA-256", body));
  return `"${base64urlEncode(digest.subarray(0, 18))}"`;
}

/** An answer as a location stores it: the body and the headers that describe it, nothing of this request. */
async function toStore(response: Response): Promise<Response> {
  const body = await response.arrayBuffer();
  const headers = new Headers();
  for (const name of ["Content-Type", "Content-Language", "Link", "Preference-Applied"]) {
    const value = response.headers.get(name);
    if (value !== null) headers.set(name, value);
  }
  headers.set("ETag", response.headers.get("ETag") ?? (await digestTag(body)));
  headers.set("Cache-Control", `max-age=${STORED_SECONDS}`);
  return new Response(body, { status: 200, headers });
}

/** Middleware, after the credential check and the rate limit: reads with a publishable key go through the cache. */
export const publicCache = () =>
  createMiddleware<AppEnv>(async function publicCache(c, next) {
    const principal = c.var.principal;
    if (principal.kind !== "key") return next();
    const cache = caches.default;
    const key = cacheKey(c, principal);
    const found = await cache.match(key);
    let stored = found;
    if (!stored) {
      // Stored under the versions the key was read with, so read from a session at least as recent: a
      // lagging replica must not put an older answer under a newer version.
      await runFromBookmark(principal.bookmark, next);
      // Errors and a route's own 304 pass through uncached.
      if (c.res.status !== 200) return;
      stored = await toStore(c.res);
      c.executionCtx.waitUntil(cache.put(key, stored.clone()));
    }
    const notModified = noneMatch(c.req.header("If-None-Match"), stored.headers.get("ETag")!);
    const headers = new Headers(stored.headers);
    headers.set("Cache-Control", browserCaching(principal));
    headers.set("Vary", VARY);
    headers.set("Cache-Status", found ? `${CACHE_NAME}; hit` : `${CACHE_NAME}; fwd=miss; stored`);
    if (notModified) {
      for (const name of ["Content-Type", "Content-Language"]) headers.delete(name);
      await stored.body?.cancel();
    }
    const init = { status: notModified ? (304 as const) : (200 as const), headers };
    const body = notModified ? null : stored.body;
    // On a hit no response exists yet: c.newResponse keeps the headers set before (CORS, security).
    if (found) return c.newResponse(body, init);
    c.res = new Response(body, init);
  });
