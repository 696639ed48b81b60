/**
 * `q=` as FTS5 queries (migrations/0004_query_indexes.sql). The index folds
 * case and accents (`unicode61 remove_diacritics 2`); each word of the query
 * becomes a quoted string, so no character of it is FTS5 syntax, and the
 * last one also matches as a prefix (`tour eif` finds "Tour Eiffel").
 * A word is quoted in its search form (src/core/search-form.ts), as the index
 * stores the text: in the scripts written without spaces it is the phrase of
 * its characters, found anywhere inside a name ("博物館" in "東京国立博物館").
 *
 * Relevance is three tiers, best first: every word in the name; every word
 * in the name, address or tags; every word anywhere (the description too).
 * A tier depends only on the row itself, never on the rest of the index as
 * bm25 does, so a row keeps its place while others are written and pages
 * cannot skip or repeat it. Within a tier, rows come in id order, the order
 * FTS5 reads its index in: a page costs the same at any depth.
 */
import { sql, type SQL } from "drizzle-orm";
import { queryString } from "../../core/search-form";

export const MAX_QUERY_LENGTH = 200;

/**
 * A word: letters, digits and combining marks, with at least one letter or digit. Found as a run
 * first, then tested: one pattern asking for the letter inside the run would rescan a run of marks
 * from each of its positions (quadratic time; scripts/check-regexes.ts).
 */
const RUN = /[\p{L}\p{N}\p{M}]+/gu;
const LETTER_OR_DIGIT = /[\p{L}\p{N}]/u;

/** The words of `q`; empty when it holds no letter or digit. */
export const queryWords = (q: string): string[] => (q.match(RUN) ?? []).filter((run) => LETTER_OR_DIGIT.test(run));

export type TextQuery = { text: string; terms: string };

/** The FTS5 expression every match must satisfy: all words, the last as a prefix. */
export function textQuery(text: string): TextQuery {
  const words = queryWords(text);
  const terms = words.map((w, i) => queryString(w, i === words.length - 1)).join(" ");
  return { text, terms: `(${terms})` };
}

/**
 * The FTS5 expressions of the relevance tiers (1 best), given each tier's
 * columns: `[["name"], ["name", "address", "tags"]]` makes tiers 1 and 2,
 * and tier 3 is what matches anywhere else.
 */
export function tierMatches({ terms }: TextQuery, tiers: readonly (readonly string[])[]): string[] {
  const inColumns = (columns: readonly string[]) => `{${columns.join(" ")}} : ${terms}`;
  return [...tiers, null].map((columns, i) => {
    const within = columns ? inColumns(columns) : terms;
    const previous = tiers[i - 1];
    return previous ? `${within} NOT ${inColumns(previous)}` : within;
  });
}

/** SQL: the row ids of `table`'s full-text index matching `q` anywhere, whoever's rows they are. */
export const matchingIds = (ftsTable: string, q: TextQuery): SQL =>
  sql`SELECT rowid FROM ${sql.identifier(ftsTable)} WHERE ${sql.identifier(ftsTable)} MATCH ${q.terms}`;

/**
 * SQL: the ids of `accountId`'s rows of `table` matching `q` anywhere. The index holds every account's
 * text, so a count of its matches alone would depend on other accounts' rows: anything that counts
 * matches to decide an answer (a tile's choice of candidates, src/tiles/source.ts) counts these.
 */
export const accountMatchingIds = (ftsTable: string, table: string, accountId: number, q: TextQuery): SQL => {
  const [fts, rows] = [sql.identifier(ftsTable), sql.identifier(table)];
  // CROSS JOIN keeps the index outer: it yields its matches, each looked up by primary key.
  return sql`SELECT ${rows}.id FROM ${fts} CROSS JOIN ${rows} ON ${rows}.id = ${fts}.rowid WHERE ${fts} MATCH ${q.terms} AND ${rows}.account_id = ${accountId}`;
};
