/**
 * The text of a stored (sanitized) HTML description, for the full-text index:
 * tags become spaces, so `<b>Tour</b><i>Eiffel</i>` reads as two words, and
 * character references become the characters they name, so `Mus&eacute;e`
 * is found as "musee". Search folds accents, so a named reference to an
 * accented letter only has to yield its base letter.
 */

const BASIC: Record<string, string> = { amp: "&", lt: "<", gt: ">", quot: '"', apos: "'", nbsp: " " };
const ACCENTED = /^([A-Za-z]{1,2})(acute|grave|circ|uml|tilde|ring|cedil|slash|lig)$/;

/**
 * `html` with each tag replaced by a space: `<` up to the first `>` outside a
 * quoted attribute value (which may contain `>`). Where the input ends inside
 * a tag, that `<` stays text. The same as replacing
 * `/<(?:[^>"']|"[^"]*"|'[^']*')*>/g`, in linear time: that search rescans
 * from each `<` of an unfinished tag to the end (scripts/check-regexes.ts).
 * Whether a tag starting at a position ends, and where, does not depend on
 * what came before it, so one pass from the end finds it for every position.
 */
function replaceTags(html: string, by: string): string {
  // tagEnd[i]: the `>` that ends a tag whose inside starts at i, or -1.
  const tagEnd = new Int32Array(html.length + 1).fill(-1);
  // Where a scan from i+1 ends, by what it is inside of: nothing, "…" or '…'.
  let plain = -1;
  let double = -1;
  let single = -1;
  for (let i = html.length - 1; i >= 0; i--) {
    const [char, afterPlain, afterDouble, afterSingle] = [html[i], plain, double, single];
    plain = char === ">" ? i : char === '"' ? afterDouble : char === "'" ? afterSingle : afterPlain;
    double = char === '"' ? afterPlain : afterDouble;
    single = char === "'" ? afterPlain : afterSingle;
    tagEnd[i] = plain;
  }
  let text = "";
  let from = 0;
  for (let i = 0; i < html.length; i++) {
    const end = html[i] === "<" ? tagEnd[i + 1]! : -1;
    if (end < 0) continue;
    text += html.slice(from, i) + by;
    from = end + 1;
    i = end;
  }
  return text + html.slice(from);
}

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
  return replaceTags(html, " ")
    .replace(/&(#[0-9]+|#[xX][0-9a-fA-F]+|[A-Za-z]+);/g, (whole, name: string) => entity(name) ?? whole)
    .replace(/\s+/g, " ")
    .trim();
}
