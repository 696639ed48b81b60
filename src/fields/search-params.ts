/**
 * Query parameters of the map questions (docs/map-queries.md), shared by GET /pinpoints
 * and GET /events. Each bad value is a 400 naming its parameter, an empty
 * one (`bbox=`) included, never a filter silently ignored.
 */
import * as z from "zod";
import type { BBox } from "../db/search/geo";
import { HALF_CIRCUMFERENCE } from "../db/search/geo";
import { MAX_QUERY_LENGTH, queryWords, textQuery } from "../db/search/text-search";
import { INSTANT, parseInstant } from "./instant";
import { ID_SCHEMA, ID_TEXT } from "./schemas";

const DECIMAL = /^[+-]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d+)?$/;
const MAX_LIST = 20;

/*
 * Each parameter below is read from text by a transform, which zod's JSON Schema shows as a bare string;
 * `inputSchema` is what the OpenAPI document shows instead (openapi/document.ts): the value as the
 * server checks it, so generated clients and validators agree with it.
 */

/** A number within [min, max], as the document shows it. */
const numberIn = (minimum: number, maximum: number) => ({ type: "number", minimum, maximum });
const LONGITUDE = numberIn(-180, 180);
const LATITUDE = numberIn(-90, 90);

/** `bbox` as the document shows it: four numbers, comma-separated. */
export const BBOX_SCHEMA = {
  type: "array",
  prefixItems: [LONGITUDE, LATITUDE, LONGITUDE, LATITUDE],
  items: false,
  minItems: 4,
  maxItems: 4,
};

/** A decimal number within [min, max]. */
const decimal = (min: number, max: number, what = `a number between ${min} and ${max}`) =>
  z.string().transform((text, ctx) => {
    const n = DECIMAL.test(text.trim()) ? Number(text) : NaN;
    if (!(n >= min && n <= max)) {
      ctx.addIssue({ code: "custom", message: `must be ${what}` });
      return z.NEVER;
    }
    return n;
  });

export const latitudeParam = decimal(-90, 90)
  .optional()
  .meta({ description: "Degrees, -90 to 90; with `longitude`: nearest first", inputSchema: LATITUDE });
export const longitudeParam = decimal(-180, 180)
  .optional()
  .meta({ description: "Degrees, -180 to 180; with `latitude`", inputSchema: LONGITUDE });
/**
 * `radius`: any finite number of metres from 0. No place is farther than half the circumference of the
 * sphere the distances are measured on, so a larger radius (20,037,508, half the equator, the largest one
 * accepted before the mean radius was) means every place, and the search takes it as that.
 */
export const radiusParam = decimal(0, Number.MAX_VALUE, "a finite distance in metres from 0")
  .transform((metres) => Math.min(metres, HALF_CIRCUMFERENCE))
  .optional()
  .meta({
    description:
      "Metres, from 0: only results within it; needs `latitude` and `longitude`. Beyond " +
      `${Math.floor(HALF_CIRCUMFERENCE).toLocaleString("en-US")} (half the circumference of a sphere of the ` +
      "Earth's mean radius) every result is within it",
    inputSchema: { type: "number", minimum: 0 },
  });

export const bboxParam = z
  .string()
  .transform((text, ctx): BBox => {
    const parts = text.split(",");
    const n = parts.map((p) => (DECIMAL.test(p.trim()) ? Number(p) : NaN));
    const [minLon, minLat, maxLon, maxLat] = n as [number, number, number, number];
    const problem =
      parts.length !== 4 || n.some(Number.isNaN)
        ? "must be four numbers: minLon,minLat,maxLon,maxLat"
        : [minLon, maxLon].some((x) => x < -180 || x > 180)
          ? "longitudes must be between -180 and 180"
          : [minLat, maxLat].some((y) => y < -90 || y > 90)
            ? "latitudes must be between -90 and 90"
            : minLat > maxLat
              ? "minLat must not be greater than maxLat"
              : null;
    if (problem) {
      ctx.addIssue({ code: "custom", message: problem });
      return z.NEVER;
    }
    return { minLon, minLat, maxLon, maxLat };
  })
  .optional()
  .meta({
    description:
      "minLon,minLat,maxLon,maxLat in WGS 84 degrees (edges included), e.g. 2.25,48.81,2.42,48.90; " +
      "minLon > maxLon crosses the antimeridian; minLat must not be greater than maxLat",
    inputSchema: BBOX_SCHEMA,
    explode: false,
  });

export const qParam = z
  .string()
  .max(MAX_QUERY_LENGTH, `must be at most ${MAX_QUERY_LENGTH} characters`)
  .refine((q) => queryWords(q).length > 0, "must contain a letter or a digit")
  .transform(textQuery)
  .optional()
  .meta({
    description:
      "Words to find in the name, address, tags and description text, ignoring case and accents; the last word also as a prefix. " +
      "In Chinese, Japanese, Thai, Lao, Khmer and Burmese a word is found anywhere inside a text",
    // At least one letter or digit, as queryWords() finds them.
    inputSchema: { type: "string", maxLength: MAX_QUERY_LENGTH, pattern: "[\\p{L}\\p{N}]" },
  });

/** A comma-separated list of at most 20 items. */
const commaList = <T>(item: (text: string) => T | undefined, what: string) =>
  z.string().transform((text, ctx) => {
    const items = text.split(",").map((t) => t.trim());
    const values = items.map(item);
    if (items.length > MAX_LIST || values.some((v) => v === undefined)) {
      ctx.addIssue({ code: "custom", message: `must be a comma-separated list of at most ${MAX_LIST} ${what}` });
      return z.NEVER;
    }
    return [...new Set(values as T[])];
  });

export const tagsParam = commaList((t) => (t && t.length <= 100 ? t.toWellFormed() : undefined), "non-empty tags")
  .optional()
  .meta({
    description: "Comma-separated, e.g. museum,free: only results carrying every one of these tags",
    // Each tag is trimmed (String.prototype.trim and \s agree on white space): it needs something else.
    inputSchema: {
      type: "array",
      items: { type: "string", minLength: 1, maxLength: 100, pattern: "\\S" },
      minItems: 1,
      maxItems: MAX_LIST,
    },
    explode: false,
  });

export const categoryParam = commaList((t) => (ID_TEXT.test(t) ? Number(t) : undefined), "category ids")
  .optional()
  .meta({
    description: "Comma-separated category ids, e.g. 3,7: results in any of them",
    inputSchema: {
      type: "array",
      items: ID_SCHEMA,
      minItems: 1,
      maxItems: MAX_LIST,
    },
    explode: false,
  });

/** An ISO 8601 instant as the document shows it: the server's own pattern. */
export const INSTANT_SCHEMA = { type: "string", pattern: INSTANT.source };

/** An ISO 8601 instant with an offset, as epoch milliseconds. */
export const instantParam = z.string().transform((text, ctx) => {
  const ms = parseInstant(text);
  if (ms === null) {
    ctx.addIssue({
      code: "custom",
      message: "must be an ISO 8601 date-time with an offset, e.g. 2026-11-21T18:30:00Z",
    });
    return z.NEVER;
  }
  return ms;
});

export const updatedSinceParam = instantParam.optional().meta({
  description: "ISO 8601 instant: only results created or changed at or after it",
  inputSchema: INSTANT_SCHEMA,
});

/** The parameters shared by pinpoints and events, with the rules that tie them together. */
export const searchParams = {
  bbox: bboxParam,
  latitude: latitudeParam,
  longitude: longitudeParam,
  radius: radiusParam,
  q: qParam,
  tags: tagsParam,
  updated_since: updatedSinceParam,
};

type PointFields = { latitude?: number; longitude?: number; radius?: number };

/** `latitude` and `longitude` come together, and `radius` only with them. */
export function checkPoint(value: PointFields, ctx: z.RefinementCtx): void {
  if ((value.latitude === undefined) !== (value.longitude === undefined)) {
    const missing = value.latitude === undefined ? "latitude" : "longitude";
    ctx.addIssue({ code: "custom", path: [missing], message: "is required with latitude and longitude" });
  }
  if (value.radius !== undefined && value.latitude === undefined && value.longitude === undefined) {
    ctx.addIssue({ code: "custom", path: ["radius"], message: "needs latitude and longitude" });
  }
}

/** The values of the shared parameters, as validation gives them. */
type SearchValues = { [K in keyof typeof searchParams]?: z.output<(typeof searchParams)[K]> };

/** What the shared parameters ask, as the searches of pinpoints and events take it: the point and radius as `near`. */
export function sharedSearch({ bbox, latitude, longitude, radius, q, tags, updated_since }: SearchValues) {
  return {
    bbox,
    near: latitude === undefined || longitude === undefined ? undefined : { latitude, longitude, radius },
    q,
    tags,
    updatedSince: updated_since,
  };
}
