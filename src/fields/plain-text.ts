/**
 * The text of a stored (sanitized) HTML description, for the full-text index:
 * tags become spaces, so `<b>Tour</b><i>Eiffel</i>` reads as two words, and
 * character references become the characters they name, so `Mus&eacute;e`
 * is found as "musee". Search folds accents, so a named reference to an
 * accented letter only has to yield its base letter.
 */

// A tag with its attributes; quoted attribute values may contain ">".
const TAG = /<(?:[^>"']|"[^"]*"|'[^']*')*>/g;
const BASIC: Record<string, string> = { amp: "&", lt: "<", gt: ">", quot: '"', apos: "'", nbsp: " " };
const ACCENTED = /^([A-Za-z]{1,2})(acute|grave|circ|uml|tilde|ring|cedil|slash|lig)$/;

function entity(name: string): string | undefined {
  if (name.startsWith("#")) {
    const code = name[1] === "x" || name[1] === "X" ? parseInt(name.slice(2), 16) : Number(name.slice(1));
    return Number.isInteger(code) && code > 0 && code <= 0x10ffff ? String.fromCodePoint(code) : undefined;
  }
  return BASIC[name] ?? ACCENTED.exec(name)?.[1];
}

/** The words of `html` without its markup; null for no description. */
export function plainText(html: string | null | undefined): string | null {
  if (html === null || html === undefined) return null;
  return html
    .replace(TAG, " ")
    .replace(/&(#[0-9]+|#[xX][0-9a-fA-F]+|[A-Za-z]+);/g, (whole, name: string) => entity(name) ?? whole)
    .replace(/\s+/g, " ")
    .trim();
}

/** The values to store with a write that may change `description`: its text alongside. */
export function withDescriptionText<T extends { description?: string | null }>(
  values: T,
): T & { description_text?: string | null } {
  return values.description === undefined ? values : { ...values, description_text: plainText(values.description) };
}
