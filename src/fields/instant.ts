/** ISO 8601 instants, as event dates and the time filters of searches read them. */

// ISO 8601 extended format: date, `T`, hh:mm with optional seconds and fraction, then
// the offset (`Z`, ±hh:mm, ±hhmm or ±hh). An instant without an offset is ambiguous.
// Exported as the OpenAPI pattern of event dates.
// Each field's range is in the pattern (month 01-12, hour 00-23...), so that the document's pattern
// refuses what the server refuses; only a day past its month's end is left to parseInstant.
export const INSTANT =
  /^(\d{4})-(0[1-9]|1[0-2])-(0[1-9]|[12]\d|3[01])[Tt]([01]\d|2[0-3]):([0-5]\d)(?::([0-5]\d)(?:[.,](\d{1,9}))?)?(?:([Zz])|([+-])([01]\d|2[0-3])(?::?([0-5]\d))?)$/;

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
