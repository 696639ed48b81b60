/**
 * Field rules shared by the content resources, so a name or a tag means the
 * same thing on a pinpoint, a list, a category and an event.
 */
import * as z from "zod";
import { sanitizeHtml } from "./sanitize-html";

/** Resource ids in bodies and query strings: positive integers within SQLite's and JSON's safe range. */
export const id = z.number().int().min(1).max(Number.MAX_SAFE_INTEGER);

/**
 * JSON allows lone surrogates (`"\ud800"`), which are not Unicode text and
 * would reach storage as three U+FFFD each: every text field replaces each
 * with one U+FFFD, as a browser does for a USVString.
 */
const wellFormed = (value: string) => value.toWellFormed();

export const MAX_NAME_LENGTH = 200;
export const MAX_DESCRIPTION_LENGTH = 100_000;

/** A required display name: trimmed, not empty. */
export const name = z
  .string()
  .trim()
  .min(1, "must not be empty")
  .max(MAX_NAME_LENGTH, `must be at most ${MAX_NAME_LENGTH} characters`)
  // Says what the trim above means: at least one character that is not white space (the same set as \s).
  .meta({ pattern: "\\S" })
  .transform(wellFormed);

/** Optional plain text; `null` clears it on update. */
export const text = (max: number) =>
  z.string().trim().max(max, `must be at most ${max} characters`).transform(wellFormed).nullable();

/** HTML description, sanitized before it is stored. */
export const description = z
  .string()
  .max(MAX_DESCRIPTION_LENGTH, `must be at most ${MAX_DESCRIPTION_LENGTH} characters`)
  .transform((html) => sanitizeHtml(html.toWellFormed()))
  .nullable();

/** Tags: trimmed, empty ones dropped, duplicates removed, order kept; `null` clears them. */
export const tags = z
  .array(z.string().max(100, "must be at most 100 characters"))
  .max(100, "must have at most 100 tags")
  .nullable()
  .transform((values) => [...new Set((values ?? []).map((t) => t.trim().toWellFormed()).filter(Boolean))]);

/** An id as a query parameter writes it: a positive integer of at most 15 digits. */
export const ID_TEXT = /^[1-9]\d{0,14}$/;
/** The JSON Schema of such an id, as the document and `/queryables` state it. */
export const ID_SCHEMA = { type: "integer", minimum: 1, maximum: 999_999_999_999_999 };

/**
 * An integer query parameter naming another resource (`?list=`, `?pinpoint=`), documented as the
 * integer it stands for (so a typed client sends a number), not the text zod reads.
 */
export const idParam = z
  .string()
  .regex(ID_TEXT, "must be a positive integer")
  .transform(Number)
  .optional()
  .meta({ inputSchema: ID_SCHEMA });
