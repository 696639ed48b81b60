/**
 * GET /maps/{list_id}?key=pk_…: the live map of a list, a page for people
 * (and for an `<iframe>` on the key owner's site), not an API operation, so
 * it stays out of the OpenAPI document as /docs does; docs/publishing-maps.md
 * documents it. The Worker answers only the small HTML page and its
 * policy (./page.ts); the page's script (static/maps/map.js) reads the list
 * through the public API with the same key, every page of it. A refusal
 * (a bad address or key, a site the key does not allow, a list it does not
 * publish) is a page saying why to a browser, problem details to anyone else.
 */
import { Hono, type Context } from "hono";
import { createMiddleware } from "hono/factory";
import * as z from "zod";
import { assertOriginAllowed, authenticateKey, KEY_SHAPE, type ResolvedKey } from "../auth/publishable-keys";
import type { AppEnv } from "../core/env";
import { ApiError } from "../core/problem";
import { assertListPublished } from "../db/published";
import { ID, pathId } from "../http/path";
import { limitKeyViewer, publicRatePolicy } from "../http/middleware/rate-limit";
import { hidden } from "../http/route-metadata";
import { validate } from "../http/validation";
import { mapPage, mapPolicy, REFUSAL_POLICY, refusalMessage, refusalPage } from "./page";

const mapQuery = z.object({
  // An empty `key=` is no key, as on the API (src/http/middleware/query-parameters.ts): the page has none.
  key: z.preprocess(
    (value) => value || undefined,
    z.string().regex(KEY_SHAPE, "must be a publishable key (pk_ and 20 to 100 base64url characters)"),
  ),
});

/**
 * The key, if it may show the list here: 401 for an unknown, revoked or
 * expired key; 429 over the public limit, counted as the API counts keys (per
 * key and viewer, and per viewer before a key is looked up); 403 when
 * the page is asked for from an origin the key does not allow, by its
 * `Referer` (a framing site's origin, or the site linking to it); 404 for a
 * list the key does not publish. The browser then enforces the key's origins
 * on the frame itself (frame-ancestors).
 */
async function publishingKey(c: Context<AppEnv>, listId: number, keyText: string): Promise<ResolvedKey> {
  const key = await authenticateKey(c, keyText);
  await limitKeyViewer(c, key.keyId);
  assertOriginAllowed(key, c.req.raw);
  await assertListPublished(c.env.DB, key, listId);
  return key;
}

type MapInput = { in: { query: z.input<typeof mapQuery> }; out: { query: z.output<typeof mapQuery> } };

/** The page, with the headers that let the key's origins frame it. */
async function mapPageResponse(c: Context<AppEnv, string, MapInput>): Promise<Response> {
  const key = await publishingKey(c, pathId(c, "list"), c.req.valid("query").key);
  c.header("Content-Security-Policy", mapPolicy(c.var.config, key.origins));
  // Framed on other origins: the app-wide same-origin resource policy would get in the way.
  c.header("Cross-Origin-Resource-Policy", "cross-origin");
  // The page's own API requests carry no Origin header (same-origin GETs): they name the page's origin as
  // Referer, which the key's origin check accepts as this API's own; other origins get no Referer.
  c.header("Referrer-Policy", "same-origin");
  // The key is in the URL: shared caches must not keep the page.
  c.header("Cache-Control", "private, no-store");
  return c.html(mapPage(c.var.config));
}

/** Whether the request is a browser's navigation (a page or a frame), which reads HTML and not problem details. */
const wantsPage = (c: Context<AppEnv>) => /\btext\/html\b/i.test(c.req.header("Accept") ?? "");

/**
 * A refusal of the page (the app's error handler has made it problem details
 * by now): to a browser, the refusal page (./page.ts) with the problem's status
 * and headers, so a frame shows why the map is not there; to anything else,
 * the problem details as everywhere. Failures on our side stay problem details.
 */
const refusalsAsPages = createMiddleware<AppEnv>(async function refusalsAsPages(c, next) {
  await next();
  const error = c.error;
  if (!(error instanceof ApiError) || error.status >= 500) return;
  c.res.headers.append("Vary", "Accept");
  if (!wantsPage(c)) return;
  const headers = new Headers(error.options.headers);
  headers.set("Content-Type", "text/html; charset=utf-8");
  headers.set("Content-Security-Policy", REFUSAL_POLICY);
  headers.set("Cross-Origin-Resource-Policy", "cross-origin");
  headers.set("Cache-Control", "private, no-store");
  headers.set("Vary", "Accept");
  const page = String(await refusalPage(refusalMessage(error.status, error.detail)));
  c.res = undefined;
  c.res = new Response(page, { status: error.status, headers });
});

export const mapRoutes = new Hono<AppEnv>()
  .use(refusalsAsPages)
  .get(`/${ID}`, hidden(publicRatePolicy()), hidden(validate("query", mapQuery)), hidden(mapPageResponse));
