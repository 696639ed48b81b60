/**
 * Every request runs in one D1 session (D1 read replication): reads start
 * `first-unconstrained` (the nearest replica may answer), writes
 * `first-primary`, and a client that sends back the bookmark of an earlier
 * response starts from it, so it never reads data older than what it wrote or
 * saw. Every response that touched the database returns the session's latest
 * bookmark in `X-D1-Bookmark` (the name Cloudflare's own examples use). Without
 * read replication enabled, sessions behave as the plain binding does.
 *
 * A malformed bookmark does not stop the request here: the session starts as
 * if none were sent, and `checkBookmark`, which the resource sub-apps run
 * after the credential check, refuses it with a 400 on the operations that
 * document the header. So a wrong method is still a 405, missing credentials
 * a 401, the token endpoint answers in RFC 6749's format, and routes that do
 * not take the header (/media) ignore it.
 *
 * Handlers keep reading `c.env.DB`: this middleware gives the request its own
 * env whose DB is the binding routed into the request's sessions (db/client.ts:
 * one per database it touches, the bookmark belonging to the account's shard),
 * so the queries built once per isolate run in each request's own sessions.
 */
import { createMiddleware } from "hono/factory";
import type { AppEnv } from "../../core/env";
import { ApiError } from "../../core/problem";
import { currentBookmark, routed, runInSession } from "../../db/client";
import { BOOKMARK_HEADER, parseBookmark } from "../bookmark-header";
import { matchedOperation } from "../route-metadata";

const READS = new Set(["GET", "HEAD", "OPTIONS"]);

/**
 * 400 for a malformed bookmark on a route that documents the header: mounted after the credential
 * check, and only where a route (and so the method) matched, so a wrong method stays a 405.
 */
export const checkBookmark = createMiddleware<AppEnv>(async function checkBookmark(c, next) {
  const header = c.req.header(BOOKMARK_HEADER);
  if (header !== undefined && parseBookmark(header) === undefined && matchedOperation(c)) {
    const detail = "must be a bookmark exactly as an earlier response's X-D1-Bookmark header gave it";
    throw new ApiError("bad_request", `${BOOKMARK_HEADER} ${detail}.`, {
      errors: [{ parameter: BOOKMARK_HEADER, detail }],
    });
  }
  return next();
});

export const d1Session = createMiddleware<AppEnv>(async function d1Session(c, next) {
  const bookmark = parseBookmark(c.req.header(BOOKMARK_HEADER));
  const constraint = READS.has(c.req.method) ? "first-unconstrained" : "first-primary";
  const env = c.env;
  c.env = { ...env, DB: routed(env.DB) };
  const waitUntil = (promise: Promise<unknown>) => c.executionCtx.waitUntil(promise);
  const latest = await runInSession(env, { bookmark, constraint }, waitUntil, async () => {
    await next();
    return currentBookmark() ?? bookmark;
  });
  if (latest) c.res.headers.set(BOOKMARK_HEADER, latest);
});
