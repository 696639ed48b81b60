/**
 * The text scanners that replaced regular expressions with super-linear
 * searches (scripts/check-regexes.ts, run by `npm run check`, refuses those):
 * each gives what the regex gave, on random strings over the characters that
 * matter to it, and on the inputs that made the regex slow.
 */
import { describe, expect, it } from "vitest";
import { trimEnd } from "../src/core/trim";
import { queryWords } from "../src/db/search/text-search";
import { plainText } from "../src/fields/plain-text";
import { cutEndTagExtras } from "../src/fields/sanitize-html";

/** Deterministic random strings of up to `max` characters from `alphabet` (xorshift32). */
function* randomStrings(alphabet: string[], count: number, max = 24, seed = 12345): Generator<string> {
  let state = seed;
  const next = () => {
    state ^= state << 13;
    state ^= state >>> 17;
    state ^= state << 5;
    return (state >>> 0) / 2 ** 32;
  };
  for (let n = 0; n < count; n++) {
    const length = Math.floor(next() * max);
    yield Array.from({ length }, () => alphabet[Math.floor(next() * alphabet.length)]).join("");
  }
}

// The regexes as they were: fine on these short strings, quadratic on long hostile ones.
const OLD_TAG = /<(?:[^>"']|"[^"]*"|'[^']*')*>/g;
const OLD_END_TAG_WITH_EXTRA = /<\/([A-Za-z][^\t\n\f\r />]*)[\t\n\f\r /][^>]*>/g;
const OLD_WORD = /[\p{L}\p{N}\p{M}]*[\p{L}\p{N}][\p{L}\p{N}\p{M}]*/gu;

describe("the same results as the regexes they replace", () => {
  it("plainText: tags, quoted values with '>', unfinished tags", () => {
    const reference = (html: string) => html.replace(OLD_TAG, " ").replace(/\s+/g, " ").trim();
    for (const html of randomStrings(["<", ">", '"', "'", "a", " "], 20_000)) {
      expect(plainText(html), JSON.stringify(html)).toBe(reference(html));
    }
  });

  it("cutEndTagExtras: end tags with something after the name", () => {
    for (const html of randomStrings(["<", "/", ">", "p", "A", " ", "\t", "x"], 20_000)) {
      expect(cutEndTagExtras(html), JSON.stringify(html)).toBe(html.replace(OLD_END_TAG_WITH_EXTRA, "</$1>"));
    }
  });

  it("queryWords: runs of letters, digits and marks with a letter or digit", () => {
    for (const q of randomStrings(["a", "7", "\u0301", " ", "-", "é", "\u0300"], 20_000)) {
      expect(queryWords(q), JSON.stringify(q)).toEqual(q.match(OLD_WORD) ?? []);
    }
  });

  it("trimEnd: only the characters at the end", () => {
    for (const path of randomStrings(["/", "a"], 2_000)) expect(trimEnd(path, "/")).toBe(path.replace(/\/+$/, ""));
  });
});

describe("the inputs that made the regexes slow", () => {
  it("are answered as before", () => {
    expect(plainText(`'<'`.repeat(30_000))).toBe(`'<'`.repeat(30_000));
    expect(cutEndTagExtras("</A/".repeat(30_000))).toBe("</A/".repeat(30_000));
    expect(queryWords("\u0300".repeat(200))).toEqual([]);
    expect(trimEnd(`${"/".repeat(60_000)}x/`, "/")).toBe(`${"/".repeat(60_000)}x`);
  });
});
