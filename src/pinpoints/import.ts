/**
 * Bulk import: `POST /v3.0/pinpoints` with a GeoJSON FeatureCollection body
 * (`Content-Type: application/geo+json`) of up to 1,000 Point features. All
 * or nothing: every feature is checked with the same field rules as a single
 * create, and either all are written in one transaction (201 with the ids in
 * order) or none, with a 400 naming every bad feature by a JSON pointer into
 * the body (`/features/17/geometry/coordinates/1`).
 */
import type { Context } from "hono";
import { createMiddleware } from "hono/factory";
import * as z from "zod";
import type { AppEnv } from "../core/env";
import { ApiError, type FieldError } from "../core/problem";
import { database } from "../db/client";
import { isForeignKeyViolation } from "../db/errors";
import { categories } from "../db/schema";
import { sql } from "drizzle-orm";
import { jsonPointer } from "../http/validation";
import { insertPinpoints, type BulkRow } from "./bulk-insert";
import { pinpointCreate } from "./schemas";

export const MAX_IMPORT_FEATURES = 1000;

const GEOJSON_TYPE = /^application\/geo\+json$/i;

/** Whether a request body is GeoJSON, i.e. a bulk import. */
export const isGeoJsonBody = (c: Context) =>
  GEOJSON_TYPE.test(c.req.header("Content-Type")?.split(";")[0]?.trim() ?? "");

/** The body: a FeatureCollection whose features are checked one by one below. */
const collection = z.object({
  type: z.literal("FeatureCollection", { error: 'must be "FeatureCollection"' }),
  features: z
    .array(z.unknown())
    .min(1, "must contain at least one feature")
    .max(MAX_IMPORT_FEATURES, `must contain at most ${MAX_IMPORT_FEATURES} features`),
});

const position = z
  .tuple([z.number(), z.number()], z.number())
  .check(z.refine((p) => p.length <= 3, "must have two or three numbers: longitude, latitude, altitude"));

/** A feature's envelope; its properties are the pinpoint's fields (checked by `pinpointCreate`). */
const feature = z.object({
  type: z.literal("Feature", { error: 'must be "Feature"' }),
  geometry: z.object({
    type: z.literal("Point", { error: 'must be "Point": only points can be imported' }),
    coordinates: position,
  }),
  properties: z.record(z.string(), z.unknown()).nullable(),
});

/** Fields of a pinpoint that live in the geometry, and where. */
const COORDINATE: Record<string, string> = { longitude: "0", latitude: "1", altitude: "2" };

const fieldRules = pinpointCreate.omit({ media_file: true });

/** Where a pinpoint field's issue points in feature `index`. */
function pointerFor(index: number, path: readonly PropertyKey[]): string {
  const [field, ...rest] = path;
  const coordinate = COORDINATE[String(field)];
  const inFeature =
    coordinate !== undefined
      ? ["geometry", "coordinates", coordinate]
      : ["properties", ...(field === undefined ? [] : [field]), ...rest];
  return jsonPointer(["features", index, ...inFeature]);
}

/** Each feature as a row, or every problem of every feature. */
async function rowsOf(features: unknown[]): Promise<{ rows: BulkRow[]; errors: FieldError[] }> {
  const rows: BulkRow[] = [];
  const errors: FieldError[] = [];
  // In order, so the errors come in body order; the sanitizer is asynchronous.
  for (const [index, raw] of features.entries()) {
    const envelope = feature.safeParse(raw);
    if (!envelope.success) {
      const issues = envelope.error.issues;
      // Another geometry type makes its coordinates' issues noise.
      const wrongType = issues.some((issue) => issue.path.join("/") === "geometry/type");
      for (const issue of issues) {
        if (wrongType && issue.path[0] === "geometry" && issue.path[1] !== "type") continue;
        errors.push({ pointer: jsonPointer(["features", index, ...issue.path]), detail: issue.message });
      }
      continue;
    }
    const properties = envelope.data.properties ?? {};
    if ("media_file" in properties) {
      errors.push({
        pointer: jsonPointer(["features", index, "properties", "media_file"]),
        detail: "media cannot be imported in bulk; add it to the pinpoint afterwards with PUT",
      });
    }
    const [longitude, latitude, altitude = null] = envelope.data.geometry.coordinates;
    const fields = await fieldRules.safeParseAsync({ ...properties, longitude, latitude, altitude });
    if (!fields.success) {
      for (const issue of fields.error.issues) {
        errors.push({ pointer: pointerFor(index, issue.path), detail: issue.message });
      }
      continue;
    }
    const value = fields.data;
    rows.push({
      name: value.name,
      address: value.address ?? null,
      altitude: value.altitude ?? null,
      category: value.category ?? null,
      description: value.description ?? null,
      latitude: value.latitude,
      longitude: value.longitude,
      media_credits: value.media_credits ?? null,
      tags: value.tags ?? [],
    });
  }
  return { rows, errors };
}

/** Categories are shared (CONTRACT): any existing one may be named; a missing one is that feature's error. */
async function unknownCategories(d1: D1Database, rows: BulkRow[]): Promise<FieldError[]> {
  const named = [...new Set(rows.flatMap((row) => (row.category === null ? [] : [row.category])))];
  if (named.length === 0) return [];
  const found = new Set(
    (
      await database(d1)
        .select({ id: categories.id })
        .from(categories)
        .where(sql`${categories.id} in (select value from json_each(${JSON.stringify(named)}))`)
    ).map((row) => row.id),
  );
  return rows.flatMap((row, index) =>
    row.category === null || found.has(row.category)
      ? []
      : [{ pointer: `/features/${index}/properties/category`, detail: "must name an existing category" }],
  );
}

function invalid(errors: FieldError[]): ApiError {
  const shown = errors.slice(0, 3).map((e) => `${"pointer" in e ? e.pointer : e.parameter}: ${e.detail}`);
  const more = errors.length > 3 ? `; and ${errors.length - 3} more` : "";
  return new ApiError("validation_failed", `Nothing was imported. ${shown.join("; ")}${more}`, { errors });
}

/** Reads the body the transport middleware has already checked and decoded. */
async function parsedBody(c: Context<AppEnv>): Promise<unknown> {
  try {
    return JSON.parse(await c.req.text());
  } catch {
    throw new ApiError("malformed_json", "The request body is not valid JSON.");
  }
}

/** Imports the FeatureCollection and returns the new ids in feature order. */
export async function importFeatures(c: Context<AppEnv>): Promise<number[]> {
  const body = collection.safeParse(await parsedBody(c));
  if (!body.success) {
    throw invalid(body.error.issues.map((issue) => ({ pointer: jsonPointer(issue.path), detail: issue.message })));
  }
  const { rows, errors } = await rowsOf(body.data.features);
  if (errors.length > 0) throw invalid(errors);
  const categoryErrors = await unknownCategories(c.env.DB, rows);
  if (categoryErrors.length > 0) throw invalid(categoryErrors);
  try {
    return await insertPinpoints(c.env.DB, c.var.principal.accountId, rows);
  } catch (error) {
    // A category deleted between the check and the write: the transaction wrote nothing.
    if (isForeignKeyViolation(error)) throw invalid(await unknownCategories(c.env.DB, rows));
    throw error;
  }
}

/** On a GeoJSON body, the POST is a bulk import; any other body goes on to the single create. */
export const bulkImport = () =>
  createMiddleware<AppEnv>(async function bulkImport(c, next) {
    if (!isGeoJsonBody(c)) return next();
    return c.json({ ids: await importFeatures(c) }, 201);
  });
