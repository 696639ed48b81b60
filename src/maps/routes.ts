/**
 * GET /maps/{list_id}?key=pk_…: the live map of a list, a page for people
 * (and for an `<iframe>` on the key owner's site), not an API operation, so
 * it stays out of the OpenAPI document as /docs does; README "Publishing a
 * map" documents it. The Worker answers only the small HTML page and its
 * policy (./page.ts); the page's script (static/maps/map.js) reads the list
 * through the public API with the same key, every page of it.
 */
import { Hono, type Context } from "hono";
import * as z from "zod";
import type { AppEnv } from "../core/env";
import { ID, pathId } from "../http/path";
import { hidden } from "../http/route-metadata";
import { validate } from "../http/validation";
import { mapPage, mapPolicy } from "./page";

/** `pk_` and base64url: the shape of a publishable key; whether it is one is the key module's to say. */
const PUBLISHABLE_KEY = /^pk_[A-Za-z0-9_-]{1,200}$/;

const mapQuery = z.object({
  key: z.string().regex(PUBLISHABLE_KEY, "must be a publishable key (pk_…)"),
});

/** Who may see the list's map: the origins that may frame it, or null for any. */
type Publication = { framers: readonly string[] | null };

/**
 * KEY CHECK: the place where the publishable key is resolved. Until the key
 * module is wired in, only the key's shape is checked (by the validator) and
 * any site may frame the page; the page shows nothing by itself, and every
 * API request it makes is checked with the key. Once wired:
 *   const key = await resolvePublishableKey(c, keyText);          // 401 / 403
 *   if (key.lists !== null && !key.lists.includes(listId)) throw forbidden("list");
 *   await listRows.get(c.env.DB, key.accountId, listId);           // 404 / 403
 *   return { framers: key.origins };
 */
async function publication(_c: Context<AppEnv>, _listId: number, _keyText: string): Promise<Publication> {
  return { framers: null };
}

type MapInput = { in: { query: z.input<typeof mapQuery> }; out: { query: z.output<typeof mapQuery> } };

/** The page, with the headers that let the key's origins frame it. */
async function mapPageResponse(c: Context<AppEnv, string, MapInput>): Promise<Response> {
  const { framers } = await publication(c, pathId(c, "list"), c.req.valid("query").key);
  c.header("Content-Security-Policy", mapPolicy(c.var.config, framers));
  // Framed on other origins: the app-wide same-origin resource policy would get in the way.
  c.header("Cross-Origin-Resource-Policy", "cross-origin");
  // The page's own API requests carry the page's origin as Referer, which the key's origin check reads
  // for same-origin requests (they have no Origin header); other origins get none.
  c.header("Referrer-Policy", "same-origin");
  // The key is in the URL: shared caches must not keep the page.
  c.header("Cache-Control", "private, no-store");
  return c.html(mapPage(c.var.config));
}

export const mapRoutes = new Hono<AppEnv>().get(`/${ID}`, hidden(validate("query", mapQuery)), hidden(mapPageResponse));
