/**
 * Event occurrences (CONTRACT "Resources", Event): each `{start, end}` is an
 * ISO 8601 instant that carries its offset, so it names one moment whatever
 * the client's time zone. Stored as epoch milliseconds, always returned in
 * UTC with milliseconds (`2026-11-21T18:30:00.000Z`).
 */
import * as z from "zod";
import type { EventDate } from "../db/schema";

/** Most occurrences one event may have (a daily event for almost three years). */
export const MAX_DATES = 1000;

// ISO 8601 extended format: date, `T`, hh:mm with optional seconds and fraction, then
// the offset (`Z`, ±hh:mm, ±hhmm or ±hh). An instant without an offset is ambiguous.
const INSTANT =
  /^(\d{4})-(\d{2})-(\d{2})[Tt](\d{2}):(\d{2})(?::(\d{2})(?:[.,](\d{1,9}))?)?(?:([Zz])|([+-])(\d{2})(?::?(\d{2}))?)$/;

// Four-digit years only, so every stored instant prints back in the same format.
const EARLIEST = Date.parse("0000-01-01T00:00:00.000Z");
const LATEST = Date.parse("9999-12-31T23:59:59.999Z");

const FORMAT_HINT = "must be an ISO 8601 date-time with an offset, e.g. 2026-11-21T18:30:00Z or 2026-11-21T20:30+02:00";

/** Epoch milliseconds of an ISO 8601 instant with offset; null if it is not one. */
export function parseInstant(text: string): number | null {
  const m = INSTANT.exec(text);
  if (!m) return null;
  const [year, month, day, hour, minute, second, offsetHours, offsetMinutes] = [1, 2, 3, 4, 5, 6, 10, 11].map((i) =>
    Number(m[i] ?? 0),
  ) as [number, number, number, number, number, number, number, number];
  if (month < 1 || month > 12 || day < 1 || hour > 23 || minute > 59 || second > 59) return null;
  if (offsetHours > 23 || offsetMinutes > 59) return null;
  // Day 0 of the next month is the last day of this one (leap years included).
  if (day > new Date(new Date(0).setUTCFullYear(year, month, 0)).getUTCDate()) return null;
  // Sub-millisecond digits are truncated: milliseconds are the stored precision.
  const millis = Number((m[7] ?? "").padEnd(3, "0").slice(0, 3));
  const local = new Date(0).setUTCFullYear(year, month - 1, day) + ((hour * 60 + minute) * 60 + second) * 1000;
  const offset = (m[9] === "-" ? -1 : 1) * (offsetHours * 60 + offsetMinutes) * 60_000;
  return local + millis - offset;
}

/** The API form of stored epoch milliseconds: UTC with milliseconds. */
export const formatInstant = (ms: number): string => new Date(ms).toISOString();

const instant = z
  .string()
  .meta({
    pattern: INSTANT.source,
    description: "ISO 8601 date-time with an offset (`Z`, ±hh:mm, ±hhmm or ±hh); seconds and fraction optional",
    examples: ["2026-11-21T18:30:00Z", "2026-11-21T20:30+02:00"],
  })
  .transform((text, ctx) => {
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
