/**
 * Every request runs in one D1 session (D1 read replication): reads start
 * `first-unconstrained` (the nearest replica may answer), writes
 * `first-primary`, and a client that sends back the bookmark of an earlier
 * response starts from it, so it never reads data older than what it wrote or
 * saw. Every answer to an access token that touched the database returns the
 * session's latest position in `X-D1-Bookmark`, sealed (http/bookmark-header.ts:
 * D1's own bookmark is the whole database's commit position, which would show
 * every account's writes). Answers to publishable keys, and the public routes'
 * (the token endpoint, /media, the reference), carry none: a key's readers are
 * anyone, and none of those routes takes one back. Without read replication
 * enabled, sessions behave as the plain binding does.
 *
 * A malformed or unauthentic bookmark does not stop the request here: the
 * session starts as if none were sent, and `checkBookmark`, which the resource
 * sub-apps run after the credential check, refuses it with a 400 on the
 * operations that document the header. So a wrong method is still a 405,
 * missing credentials a 401, the token endpoint answers in RFC 6749's format,
 * and routes that do not take the header (/media) ignore it. D1's own form,
 * which answers carried before they were sealed, is accepted and not followed.
 *
 * Handlers keep reading `c.env.DB`: this middleware gives the request its own
 * env whose DB is the binding routed into the request's sessions (db/client.ts:
 * one per database it touches, a bookmark starting the session of the
 * database it is a position of), so the queries built once per isolate run in
 * each request's own sessions.
 */
import { createMiddleware } from "hono/factory";
import type { AppEnv, Principal } from "../../core/env";
import { ApiError } from "../../core/problem";
import { currentBookmark, routed, runInSession } from "../../db/client";
import { shardNames } from "../../db/shard-plan";
import { BOOKMARK_HEADER, openBookmark, sealBookmark, type SentBookmark } from "../bookmark-header";
import { matchedOperation } from "../route-metadata";

const READS = new Set(["GET", "HEAD", "OPTIONS"]);

/** What each request's header held, read once by `d1Session`, for `checkBookmark`. */
const sent = new WeakMap<Request, SentBookmark>();

/**
 * 400 for a bookmark that is none on a route that documents the header: mounted after the credential
 * check, and only where a route (and so the method) matched, so a wrong method stays a 405.
 */
export const checkBookmark = createMiddleware<AppEnv>(async function checkBookmark(c, next) {
  const bookmark = sent.get(c.req.raw);
  if (bookmark?.kind === "invalid" && matchedOperation(c)) {
    throw new ApiError("bad_request", `${BOOKMARK_HEADER} ${bookmark.detail}.`, {
      errors: [{ parameter: BOOKMARK_HEADER, detail: bookmark.detail }],
    });
  }
  return next();
});

export const d1Session = createMiddleware<AppEnv>(async function d1Session(c, next) {
  const env = c.env;
  const bookmark = await openBookmark(env, c.req.header(BOOKMARK_HEADER), shardNames(env.SHARDS));
  sent.set(c.req.raw, bookmark);
  const from = bookmark.kind === "sealed" ? bookmark.position : undefined;
  const constraint = READS.has(c.req.method) ? "first-unconstrained" : "first-primary";
  c.env = { ...env, DB: routed(env.DB) };
  const waitUntil = (promise: Promise<unknown>) => c.executionCtx.waitUntil(promise);
  const latest = await runInSession(env, { from, constraint }, waitUntil, async () => {
    await next();
    return currentBookmark() ?? from;
  });
  // Set once the credentials were checked; absent on the public routes and when they failed.
  const principal = c.get("principal") as Principal | undefined;
  // An access token's answer (a client's or a person's); a publishable key's may be cached publicly.
  if (!latest || principal === undefined || principal.kind === "key") return;
  const sealed = await sealBookmark(env, latest);
  if (sealed) c.res.headers.set(BOOKMARK_HEADER, sealed);
});
