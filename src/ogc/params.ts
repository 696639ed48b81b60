/**
 * Query parameters of the OGC API – Features routes. The standard wants a 400
 * for a parameter the API definition does not list
 * (/req/core/query-param-unknown) as well as for a bad value
 * (/req/core/query-param-invalid); /v3.0 refuses unknown ones the same way
 * (src/http/middleware/query-parameters.ts).
 */
import { createMiddleware } from "hono/factory";
import * as z from "zod";
import type { AppEnv } from "../core/env";
import { ApiError, type FieldError } from "../core/problem";
import { BBOX_SCHEMA, bboxParam } from "../fields/search-params";
import { MAX_LIMIT } from "../http/pagination";
import { ALWAYS_ACCEPTED, IGNORED } from "../http/middleware/query-parameters";

export const OGC_DEFAULT_LIMIT = 100;

/** `limit`: 1 or more (/req/core/fc-limit-definition); above our maximum it is the maximum, not an error. */
export const ogcLimit = z
  .string()
  .regex(/^[1-9]\d*$/, "must be an integer of at least 1")
  .optional()
  .transform((value) => (value === undefined ? OGC_DEFAULT_LIMIT : Math.min(Number(value), MAX_LIMIT)))
  .meta({
    description: `Features per page: ${OGC_DEFAULT_LIMIT} when absent; more than ${MAX_LIMIT} means ${MAX_LIMIT}`,
    inputSchema: { type: "integer", minimum: 1, maximum: MAX_LIMIT, default: OGC_DEFAULT_LIMIT },
  });

export const ogcCursor = z
  .string()
  .max(512)
  .optional()
  .meta({ description: "Opaque; comes with the `next` and `prev` links" });

/**
 * RFC 3339 date-time (§5.6), with a time zone; each field's range is in the pattern, so that the
 * document's pattern (built from it below) refuses what the server refuses.
 */
const RFC3339 =
  /^\d{4}-(?:0[1-9]|1[0-2])-(?:0[1-9]|[12]\d|3[01])[Tt ](?:[01]\d|2[0-3]):[0-5]\d:[0-5]\d(?:\.\d+)?(?:[Zz]|[+-](?:[01]\d|2[0-3]):[0-5]\d)$/;

/** `datetime` as the document shows it: an instant, or an interval with at most one open end. */
const instantText = RFC3339.source.slice(1, -1);
const DATETIME_PATTERN = `^(?:${instantText}|${instantText}/(?:${instantText}|\\.\\.)?|(?:\\.\\.)?/${instantText})$`;

/** A datetime as milliseconds; an open end is undefined. */
export type TimeRange = { from?: number; to?: number };

function instant(text: string, ctx: z.core.$RefinementCtx<string>): number {
  // Date.parse reads only the upper-case separators; RFC 3339 allows both (§5.6 NOTE).
  const ms = RFC3339.test(text) ? Date.parse(text.toUpperCase().replace(" ", "T")) : NaN;
  if (Number.isNaN(ms)) {
    ctx.addIssue({
      code: "custom",
      message: "must be an RFC 3339 date-time, or an interval start/end with .. for an open end",
    });
    return z.NEVER;
  }
  return ms;
}

/** `datetime` (/req/core/fc-time-definition): an instant, or `start/end` with `..` or nothing for an open end. */
export const ogcDatetime = z
  .string()
  .transform((text, ctx): TimeRange => {
    const parts = text.split("/");
    if (parts.length === 1) {
      const at = instant(text, ctx);
      return { from: at, to: at };
    }
    const [start = "", end = "", extra] = parts;
    const open = (part: string) => part === "" || part === "..";
    if (extra !== undefined || (open(start) && open(end))) {
      ctx.addIssue({
        code: "custom",
        message: "must be an instant or an interval start/end with at most one open end",
      });
      return z.NEVER;
    }
    const range: TimeRange = {};
    if (!open(start)) range.from = instant(start, ctx);
    if (!open(end)) range.to = instant(end, ctx);
    if (range.from !== undefined && range.to !== undefined && range.from > range.to) {
      ctx.addIssue({ code: "custom", message: "the start must not be after the end" });
      return z.NEVER;
    }
    return range;
  })
  .optional()
  .meta({
    description:
      "An RFC 3339 instant or interval (`start/end`, `..` for an open end): events with an occurrence in it; " +
      "pinpoints have no time and all match; the start must not be after the end",
    example: "2026-06-01T00:00:00Z/..",
    inputSchema: { type: "string", pattern: DATETIME_PATTERN, example: "2026-06-01T00:00:00Z/.." },
  });

/**
 * `f`, the output format browser clients (OpenLayers, Leaflet plugins) send on
 * every request: JSON is the only encoding of metadata, GeoJSON of features,
 * so `json` is accepted everywhere and `geojson` where features are served.
 */
export const ogcFormat = (...formats: [string, ...string[]]) =>
  z
    .enum(formats, { error: `must be ${formats.join(" or ")}` })
    .optional()
    .meta({ description: `The response format: ${formats.map((f) => `\`${f}\``).join(" or ")} (the only one served)` });

/** 400 for any query parameter `schema` does not name, one entry per parameter. */
export const knownParameters = (schema: z.ZodObject) =>
  createMiddleware<AppEnv>(async function knownParameters(c, next) {
    const known = new Set([...Object.keys(schema.shape), ...ALWAYS_ACCEPTED, IGNORED]);
    const errors: FieldError[] = Object.keys(c.req.queries())
      .filter((name) => !known.has(name))
      .map((parameter) => ({ parameter, detail: "is not a parameter of this operation" }));
    if (errors.length > 0) {
      const names = errors.map((e) => ("parameter" in e ? e.parameter : "")).join(", ");
      throw new ApiError("validation_failed", `Unknown query parameter(s): ${names}.`, { errors });
    }
    return next();
  });

/**
 * `bbox` (/req/core/fc-bbox-definition): four numbers, or six with heights,
 * which are dropped (features are points on the ground: any height matches).
 * The four go to the query issue's own `bbox` rule, antimeridian included.
 */
const HEIGHT = { type: "number" };

export const ogcBbox = z
  .string()
  .transform((text) => {
    const parts = text.split(",");
    return parts.length === 6 ? [parts[0], parts[1], parts[3], parts[4]].join(",") : text;
  })
  .pipe(bboxParam.unwrap())
  .optional()
  .meta({
    description:
      "minLon,minLat,maxLon,maxLat in WGS 84 (CRS84), or six numbers with heights; minLon > maxLon crosses " +
      "the antimeridian; minLat must not be greater than maxLat",
    inputSchema: {
      oneOf: [
        BBOX_SCHEMA,
        {
          ...BBOX_SCHEMA,
          prefixItems: [...BBOX_SCHEMA.prefixItems.slice(0, 2), HEIGHT, ...BBOX_SCHEMA.prefixItems.slice(2), HEIGHT],
          minItems: 6,
          maxItems: 6,
        },
      ],
    },
    explode: false,
  });
