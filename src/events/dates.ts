/**
 * Event occurrences (CONTRACT "Resources", Event): each `{start, end}` is an
 * ISO 8601 instant that carries its offset, so it names one moment whatever
 * the client's time zone. Stored as epoch milliseconds, always returned in
 * UTC with milliseconds (`2026-11-21T18:30:00.000Z`).
 */
import * as z from "zod";
import type { EventDate } from "../db/schema";
import { parseInstant } from "../fields/instant";

/** Most occurrences one event may have (a daily event for almost three years). */
export const MAX_DATES = 1000;

// Four-digit years only, so every stored instant prints back in the same format.
const EARLIEST = Date.parse("0000-01-01T00:00:00.000Z");
const LATEST = Date.parse("9999-12-31T23:59:59.999Z");

const FORMAT_HINT = "must be an ISO 8601 date-time with an offset, e.g. 2026-11-21T18:30:00Z or 2026-11-21T20:30+02:00";

/** The API form of stored epoch milliseconds: UTC with milliseconds. */
export const formatInstant = (ms: number): string => new Date(ms).toISOString();

const instant = z.string().transform((text, ctx) => {
  const ms = parseInstant(text);
  if (ms === null) {
    ctx.addIssue({ code: "custom", message: FORMAT_HINT });
    return z.NEVER;
  }
  if (ms < EARLIEST || ms > LATEST) {
    ctx.addIssue({ code: "custom", message: "must fall between the years 0000 and 9999 in UTC" });
    return z.NEVER;
  }
  return ms;
});

const occurrence = z
  .object({ start: instant, end: instant })
  .refine((d) => d.end >= d.start, { message: "must not be before start", path: ["end"] });

/** `dates`: one or more occurrences, each with `end >= start`, kept in the order sent. */
export const dateList = z
  .array(occurrence)
  .min(1, "must have at least one occurrence")
  .max(MAX_DATES, `must have at most ${MAX_DATES} occurrences`)
  .transform((dates): EventDate[] => dates.map(({ start, end }) => ({ start, end })));
