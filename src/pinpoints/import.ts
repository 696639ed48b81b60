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
import { writerOf } from "../auth/actor";
import type { AppEnv } from "../core/env";
import { ApiError, type FieldError } from "../core/problem";
import { database } from "../db/client";
import { isForeignKeyViolation } from "../db/errors";
import { categories } from "../db/schema";
import { sql } from "drizzle-orm";
import { jsonPointer } from "../http/validation";
import { insertPinpoints, type BulkRow } from "./bulk-insert";
import { location, pinpointCreate } from "./schemas";

export const MAX_IMPORT_FEATURES = 1000;

const GEOJSON_TYPE = /^application\/geo\+json$/i;

/** Whether a request body is GeoJSON, i.e. a bulk import. */
export const isGeoJsonBody = (c: Context) =>
  GEOJSON_TYPE.test(c.req.header("Content-Type")?.split(";")[0]?.trim() ?? "");

/** A Point's coordinates: the pinpoint's longitude, latitude and, optionally, altitude, with their bounds. */
const position = z.tuple([location.longitude, location.latitude, location.altitude.optional()], {
  error: "must have two or three numbers: longitude, latitude, altitude",
});

/** A feature's properties: a pinpoint's fields but those in the geometry; no media (PUT adds them). */
const importProperties = pinpointCreate.omit({ latitude: true, longitude: true, altitude: true }).extend({
  media_file: z
    .never({ error: "media cannot be imported in bulk; add it to the pinpoint afterwards with PUT" })
    .optional()
    .meta({ description: "Not in an import: add media to the pinpoint afterwards with PUT" }),
});

/** One feature of an import, checked with the same field rules as a single create. */
const importFeature = z
  .object({
    type: z.literal("Feature", { error: 'must be "Feature"' }),
    geometry: z.object({
      type: z.literal("Point", { error: 'must be "Point": only points can be imported' }),
      coordinates: position,
    }),
    properties: importProperties,
  })
  .meta({ id: "PinpointImportFeature" });

const collectionOf = <Item extends z.ZodType>(item: Item) =>
  z.object({
    type: z.literal("FeatureCollection", { error: 'must be "FeatureCollection"' }),
    features: z
      .array(item)
      .min(1, "must contain at least one feature")
      .max(MAX_IMPORT_FEATURES, `must contain at most ${MAX_IMPORT_FEATURES} features`),
  });

/** The body, for the reference; the import checks its envelope first, then each feature with `importFeature`. */
export const pinpointImport = collectionOf(importFeature).meta({ id: "PinpointImport" });

const envelope = collectionOf(z.unknown());

/** The answer: the new pinpoints' ids. */
export const importedJson = z
  .object({ ids: z.array(z.number().int()).meta({ description: "The new pinpoints' ids, in feature order" }) })
  .meta({ id: "PinpointImportResult" });

const isObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === "object" && value !== null && !Array.isArray(value);

/** Each feature as a row, or every problem of every feature. */
async function rowsOf(features: unknown[]): Promise<{ rows: BulkRow[]; errors: FieldError[] }> {
  const rows: BulkRow[] = [];
  const errors: FieldError[] = [];
  // In order, so the errors come in body order; the sanitizer is asynchronous.
  for (const [index, raw] of features.entries()) {
    // GeoJSON allows `"properties": null`; here it has no name, which is what the error says.
    const given = isObject(raw) && raw.properties === null ? { ...raw, properties: {} } : raw;
    const parsed = await importFeature.safeParseAsync(given);
    if (!parsed.success) {
      const issues = parsed.error.issues;
      // Another geometry type makes its coordinates' issues noise.
      const wrongType = issues.some((issue) => issue.path.join("/") === "geometry/type");
      for (const issue of issues) {
        if (wrongType && issue.path[0] === "geometry" && issue.path[1] !== "type") continue;
        errors.push({ pointer: jsonPointer(["features", index, ...issue.path]), detail: issue.message });
      }
      continue;
    }
    const { geometry, properties: value } = parsed.data;
    const [longitude, latitude, altitude = null] = geometry.coordinates;
    rows.push({
      name: value.name,
      address: value.address ?? null,
      altitude,
      category: value.category ?? null,
      description: value.description ?? null,
      latitude,
      longitude,
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
  const body = envelope.safeParse(await parsedBody(c));
  if (!body.success) {
    throw invalid(body.error.issues.map((issue) => ({ pointer: jsonPointer(issue.path), detail: issue.message })));
  }
  const { rows, errors } = await rowsOf(body.data.features);
  if (errors.length > 0) throw invalid(errors);
  try {
    return await insertPinpoints(c.env.DB, writerOf(c.var.principal), rows);
  } catch (error) {
    // The foreign key refuses a category that does not exist, and the transaction writes nothing: only
    // then are the features naming one looked for, so an import costs no query for the categories it names.
    if (isForeignKeyViolation(error)) throw invalid(await unknownCategories(c.env.DB, rows));
    throw error;
  }
}

/** On a GeoJSON body, the POST is a bulk import; any other body goes on to the single create. */
export const bulkImport = () =>
  createMiddleware<AppEnv>(async function bulkImport(c, next) {
    if (!isGeoJsonBody(c)) return next();
    return c.json({ ids: await importFeatures(c) } satisfies z.output<typeof importedJson>, 201);
  });
