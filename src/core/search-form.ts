/**
 * The form of a text that the full-text index stores and that a query is
 * matched in (docs/map-queries.md "Text search in every script"). Chinese, Japanese, Thai,
 * Lao, Khmer and Burmese are written without spaces between words, so the
 * index could only find a name by its first characters. Here each letter or
 * digit of those scripts becomes a word of its own, and a query word in them
 * becomes the phrase of its characters: "博物館" is found inside
 * "東京国立博物館". No dictionary is involved, so a name and a query are cut
 * alike whatever surrounds them (docs/benchmarks.md "Text search in every
 * script" measures this against word segmentation and trigrams).
 *
 * The characters are listed here rather than read from the runtime's Unicode
 * tables so that the form never changes under stored rows: the letters and
 * digits (\p{L}, \p{N}) whose Script_Extensions include Han, Hiragana,
 * Katakana, Thai, Lao, Khmer or Myanmar, and not Latin (Unicode 16;
 * test/search-scripts.test.ts compares). Marks stay where they are: the index
 * keeps them as words of their own (migrations/0012_search_forms.sql).
 */

/** Inclusive code point ranges of the characters that become words of their own. */
export const SPACED_RANGES: readonly (readonly [number, number])[] = [
  [0xe01, 0xe30],
  [0xe32, 0xe33],
  [0xe40, 0xe46],
  [0xe50, 0xe59],
  [0xe81, 0xe82],
  [0xe84, 0xe84],
  [0xe86, 0xe8a],
  [0xe8c, 0xea3],
  [0xea5, 0xea5],
  [0xea7, 0xeb0],
  [0xeb2, 0xeb3],
  [0xebd, 0xebd],
  [0xec0, 0xec4],
  [0xec6, 0xec6],
  [0xed0, 0xed9],
  [0xedc, 0xedf],
  [0x1000, 0x102a],
  [0x103f, 0x1049],
  [0x1050, 0x1055],
  [0x105a, 0x105d],
  [0x1061, 0x1061],
  [0x1065, 0x1066],
  [0x106e, 0x1070],
  [0x1075, 0x1081],
  [0x108e, 0x108e],
  [0x1090, 0x1099],
  [0x1780, 0x17b3],
  [0x17d7, 0x17d7],
  [0x17dc, 0x17dc],
  [0x17e0, 0x17e9],
  [0x17f0, 0x17f9],
  [0x3005, 0x3007],
  [0x3021, 0x3029],
  [0x3031, 0x3035],
  [0x3038, 0x303c],
  [0x3041, 0x3096],
  [0x309d, 0x309f],
  [0x30a1, 0x30fa],
  [0x30fc, 0x30ff],
  [0x3192, 0x3195],
  [0x31f0, 0x31ff],
  [0x3220, 0x3229],
  [0x3280, 0x3289],
  [0x3400, 0x4dbf],
  [0x4e00, 0x9fff],
  [0xa9e0, 0xa9e4],
  [0xa9e6, 0xa9fe],
  [0xaa60, 0xaa76],
  [0xaa7a, 0xaa7a],
  [0xaa7e, 0xaa7f],
  [0xf900, 0xfa6d],
  [0xfa70, 0xfad9],
  [0xff66, 0xff9f],
  [0x116d0, 0x116e3],
  [0x16fe3, 0x16fe3],
  [0x16ff2, 0x16ff6],
  [0x1aff0, 0x1aff3],
  [0x1aff5, 0x1affb],
  [0x1affd, 0x1affe],
  [0x1b000, 0x1b122],
  [0x1b132, 0x1b132],
  [0x1b150, 0x1b152],
  [0x1b155, 0x1b155],
  [0x1b164, 0x1b167],
  [0x1d360, 0x1d371],
  [0x20000, 0x2a6df],
  [0x2a700, 0x2b81d],
  [0x2b820, 0x2cead],
  [0x2ceb0, 0x2ebe0],
  [0x2ebf0, 0x2ee5d],
  [0x2f800, 0x2fa1d],
  [0x30000, 0x3134a],
  [0x31350, 0x33479],
];

const hex = (code: number) => `\\u{${code.toString(16)}}`;
const SPACED = new RegExp(`[${SPACED_RANGES.map(([from, to]) => `${hex(from)}-${hex(to)}`).join("")}]`, "gu");

/** `text` with a space before and after each character of SPACED_RANGES. */
export const spaced = (text: string): string => text.replace(SPACED, " $& ");

/**
 * A query word (letters, digits and marks only) as an FTS5 string in search form: quoted, so nothing
 * in it is syntax, and with `prefix` its last word matches as a prefix, unless that is a character
 * of its own, which is a whole word already: a one-character prefix has no prefix index, and FTS5
 * would merge the lists of every word it begins before returning a row (migrations/0009_fts_prefix_indexes.sql).
 */
export function queryString(word: string, prefix: boolean): string {
  const form = spaced(word);
  return `"${form.trim()}"${prefix && !form.endsWith(" ") ? "*" : ""}`;
}

/** The search form to store beside `text`: null when it is `text` itself (no character changes it). */
export function searchForm(text: string | null | undefined): string | null {
  if (text === null || text === undefined) return null;
  const form = spaced(text);
  return form === text ? null : form;
}
