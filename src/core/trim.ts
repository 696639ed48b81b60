/**
 * String trimming without a regex: `/\/+$/` looks simple, but an unanchored
 * search retries it from every slash of a run that does not end the string,
 * so a request path of many slashes would take quadratic time
 * (scripts/check-regexes.ts).
 */

/** `text` without the `char`s it ends with. */
export function trimEnd(text: string, char: string): string {
  let end = text.length;
  while (end > 0 && text[end - 1] === char) end--;
  return text.slice(0, end);
}
