/**
 * What `q=` must find, stated apart from the index (docs/map-queries.md, "Text search in every
 * script"): a query word matches a word of a text where it starts and ends at a boundary, and between
 * any two characters of a script written without spaces there is one; the last query word only has
 * to start there. The brute-force answer the text-search tests check the service against.
 */

/** A letter or digit of a script written without spaces, from the runtime's Unicode properties. */
export const NO_SPACES =
  /^(?=[\p{L}\p{N}])(?!\p{scx=Latin})[\p{scx=Han}\p{scx=Hiragana}\p{scx=Katakana}\p{scx=Thai}\p{scx=Lao}\p{scx=Khmer}\p{scx=Myanmar}]$/u;

/** Lower case, accents of Latin letters removed: what the index folds. */
const fold = (text: string) =>
  text
    .normalize("NFD")
    .replace(/(\p{scx=Latin})[\u0300-\u036f]+/gu, "$1")
    .normalize("NFC")
    .toLowerCase();

const wordsOf = (text: string) =>
  fold(text)
    .split(/[^\p{L}\p{N}\p{M}]+/u)
    .filter(Boolean);

/** Whether query word `w` occurs in text word `word` between boundaries (only starting at one if `prefix`). */
function occurs(word: string, w: string, prefix: boolean): boolean {
  const chars = [...word];
  const query = [...w];
  const boundary = (k: number) =>
    k === 0 || k === chars.length || NO_SPACES.test(chars[k - 1]!) || NO_SPACES.test(chars[k]!);
  for (let i = 0; i + query.length <= chars.length; i++) {
    if (chars.slice(i, i + query.length).join("") !== query.join("")) continue;
    if (boundary(i) && (prefix || boundary(i + query.length))) return true;
  }
  return false;
}

/** Whether every word of `q` occurs in `texts`, the last as a prefix. */
export function matches(texts: (string | undefined)[], q: string): boolean {
  const words = texts.flatMap((t) => (t ? wordsOf(t) : []));
  const query = wordsOf(q);
  return query.every((w, i) => words.some((word) => occurs(word, w, i === query.length - 1)));
}
