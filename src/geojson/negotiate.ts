/**
 * Content negotiation between our JSON and GeoJSON: a client asks for GeoJSON
 * with `Accept: application/geo+json` (preferred over `application/json`) or
 * `format=geojson` (for links and browsers); JSON stays the default. Both
 * representations come from the same handler: this middleware, in each GET
 * route's handlers, turns its JSON answer into Features afterwards, so every
 * filter of the collection works in both without the handlers knowing.
 * Responses say `Vary: Accept`.
 */
import type { Context } from "hono";
import { createMiddleware } from "hono/factory";
import * as z from "zod";
import type { AppEnv } from "../core/env";
import { ApiError } from "../core/problem";
import { markValidation } from "../http/route-metadata";
import { featureCollection, GEOJSON, geojsonHref, pageLinks, type Feature, type Link } from "./features";

const FORMATS = ["json", "geojson"] as const;

/** The `format` parameter as `wantsGeoJson` reads it, for the reference. */
const formatQuery = z.object({
  format: z
    .enum(FORMATS)
    .optional()
    .meta({ description: "`geojson` answers GeoJSON (`application/geo+json`) whatever `Accept` says; `json`, JSON" }),
});

/** The quality a media range list gives `type`: its most specific matching range wins (RFC 9110 §12.5.1). */
function quality(accept: string, type: string): { q: number; position: number } {
  const [major] = type.split("/");
  let best = { q: 0, position: Infinity, specificity: -1 };
  accept.split(",").forEach((range, position) => {
    const [mediaRange = "", ...params] = range.split(";").map((part) => part.trim().toLowerCase());
    const specificity = mediaRange === type ? 2 : mediaRange === `${major}/*` ? 1 : mediaRange === "*/*" ? 0 : -1;
    if (specificity <= best.specificity) return;
    const qParam = params.find((p) => p.startsWith("q="));
    const q = qParam ? Number(qParam.slice(2)) : 1;
    best = { q: Number.isFinite(q) ? q : 0, position, specificity };
  });
  return { q: best.q, position: best.position };
}

/**
 * Whether the request asks for GeoJSON: `format` decides when given (400 if
 * it is neither `json` nor `geojson`); else `Accept`, GeoJSON winning over
 * JSON on a higher quality, or on an equal one when it is listed first.
 */
export function wantsGeoJson(c: Context): boolean {
  const format = c.req.query("format");
  if (format !== undefined) {
    if (!(FORMATS as readonly string[]).includes(format)) {
      const detail = `must be one of ${FORMATS.join(", ")}`;
      throw new ApiError("validation_failed", `format: ${detail}`, { errors: [{ parameter: "format", detail }] });
    }
    return format === "geojson";
  }
  const accept = c.req.header("Accept");
  if (!accept) return false;
  const geo = quality(accept, GEOJSON);
  const json = quality(accept, "application/json");
  return geo.q > 0 && (geo.q > json.q || (geo.q === json.q && geo.position < json.position));
}

type Item = { id: number } & Record<string, unknown>;
type Page = { results: Item[]; next: string | null; previous: string | null };

const isPage = (body: Item | Page): body is Page => Array.isArray(body.results);

/** How a resource's JSON items become Features (events look up their pinpoints' locations). */
export type ToFeatures = (c: Context<AppEnv>, items: Item[]) => Promise<Feature[]>;

/** An alternate representation link: the same resource as plain JSON. */
function jsonAlternate(href: string): Link {
  const url = new URL(href);
  url.searchParams.delete("format");
  return { href: url.toString(), rel: "alternate", type: "application/json" };
}

/**
 * Middleware for a resource's GET routes: a page (`{results, next, previous}`)
 * becomes a FeatureCollection with `self`/`next`/`prev` links, a single item a
 * Feature with a `self` link. Errors stay problem details. It checks `format`,
 * and says so to the reference.
 */
export const geojsonVariant = (toFeatures: ToFeatures) =>
  markValidation(createGeojsonVariant(toFeatures), { target: "query", schema: formatQuery });

const createGeojsonVariant = (toFeatures: ToFeatures) =>
  createMiddleware<AppEnv>(async function geojsonVariant(c, next) {
    const geo = wantsGeoJson(c);
    await next();
    c.res.headers.append("Vary", "Accept");
    if (!geo || c.res.status !== 200 || !c.res.headers.get("Content-Type")?.startsWith("application/json")) return;
    const body = (await c.res.json()) as Item | Page;
    const self = c.req.url;
    let document: unknown;
    if (isPage(body)) {
      const links = [...pageLinks(self, body.next, body.previous), jsonAlternate(self)];
      document = featureCollection(await toFeatures(c, body.results), links);
    } else {
      const [feature] = await toFeatures(c, [body]);
      document = { ...feature, links: [{ href: geojsonHref(self), rel: "self", type: GEOJSON }, jsonAlternate(self)] };
    }
    c.res = new Response(JSON.stringify(document), { status: 200, headers: { "Content-Type": GEOJSON } });
    c.res.headers.delete("Content-Length");
  });
