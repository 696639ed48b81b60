/**
 * Whether a cron trigger of wrangler.toml fires in a given minute (UTC), for
 * `npm run preview`, which runs them on their schedule (scripts/lib/preview.ts).
 * Five fields, minute hour day-of-month month day-of-week, each `*`, a number,
 * a range `a-b`, a step `*\/n` or `a-b/n`, or a list of those; day-of-week 0 or 7
 * is Sunday; when both day fields are restricted, either may match (as in
 * cron(8)). Cloudflare's extensions (names, `L`, `W`, `#`) are refused.
 */

const FIELDS = [
  { name: "minute", min: 0, max: 59 },
  { name: "hour", min: 0, max: 23 },
  { name: "day of month", min: 1, max: 31 },
  { name: "month", min: 1, max: 12 },
  { name: "day of week", min: 0, max: 7 },
] as const;

/** The values one field admits. */
function values(field: string, { name, min, max }: (typeof FIELDS)[number], expression: string): Set<number> {
  const admitted = new Set<number>();
  for (const part of field.split(",")) {
    const match = /^(\*|(\d+)(?:-(\d+))?)(?:\/(\d+))?$/.exec(part);
    if (!match) throw new Error(`The cron trigger "${expression}": "${part}" in its ${name} is not supported here.`);
    const [, , from, to, step] = match;
    const start = from === undefined ? min : Number(from);
    const end = from === undefined ? max : to === undefined ? (step === undefined ? start : max) : Number(to);
    const by = step === undefined ? 1 : Number(step);
    if (start < min || end > max || start > end || by < 1) {
      throw new Error(`The cron trigger "${expression}": "${part}" is outside its ${name} (${min}-${max}).`);
    }
    for (let value = start; value <= end; value += by) admitted.add(value);
  }
  return admitted;
}

/** Whether `expression` fires in the minute of `time`. */
export function cronMatches(expression: string, time: Date): boolean {
  const fields = expression.trim().split(/\s+/);
  if (fields.length !== 5) throw new Error(`The cron trigger "${expression}" does not have five fields.`);
  const [minute, hour, day, month, weekday] = fields.map((field, i) => values(field, FIELDS[i]!, expression));
  if (weekday!.has(7)) weekday!.add(0);
  const dayMatches = day!.has(time.getUTCDate());
  const weekdayMatches = weekday!.has(time.getUTCDay());
  const days = fields[2] === "*" || fields[4] === "*" ? dayMatches && weekdayMatches : dayMatches || weekdayMatches;
  return (
    minute!.has(time.getUTCMinutes()) && hour!.has(time.getUTCHours()) && month!.has(time.getUTCMonth() + 1) && days
  );
}
