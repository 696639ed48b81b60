/**
 * The search form of src/core/search-form.ts computed in SQL, for rows that
 * were written before the app stored it (the data fill of migration 0012,
 * src/db/fills.ts): a recursive walk over a text one character a step, putting
 * a space before and after each character of SPACED_RANGES. The ranges are
 * searched as a binary tree of comparisons; D1 refuses a GLOB of every range as
 * too complex, so only texts holding a character of five blocks that cover the
 * ranges are walked (test/search-scripts.test.ts compares the walk with the app
 * at every range's edges, and checks the blocks cover the ranges).
 *
 * Imports name their files so the Node scripts can load this module too
 * (.dependency-cruiser.cjs PORTABLE).
 */
import { SPACED_RANGES } from "../../core/search-form.ts";

/** Blocks of code points holding every range of SPACED_RANGES: a GLOB class of five fits D1's 50-byte pattern limit. */
export const COVERING_BLOCKS: readonly (readonly [number, number])[] = [
  [0xe01, 0x17f9],
  [0x3005, 0x9fff],
  [0xa9e0, 0xaa7f],
  [0xf900, 0xff9f],
  [0x116d0, 0x33479],
];

const hex = (code: number) => `0x${code.toString(16).toUpperCase()}`;

/** SQL: whether the code point in `column` is in one of `ranges` (sorted, disjoint), by halving. */
function inRanges(column: string, ranges: readonly (readonly [number, number])[]): string {
  if (ranges.length === 1) {
    const [from, to] = ranges[0]!;
    return from === to ? `${column} = ${hex(from)}` : `${column} BETWEEN ${hex(from)} AND ${hex(to)}`;
  }
  const middle = Math.floor(ranges.length / 2);
  const split = ranges[middle]![0];
  return `CASE WHEN ${column} < ${hex(split)} THEN ${inRanges(column, ranges.slice(0, middle))} ELSE ${inRanges(column, ranges.slice(middle))} END`;
}

/** SQL: whether the code point in `column` becomes a word of its own. */
export const isSpacedSql = (column: string) =>
  `${column} >= ${hex(SPACED_RANGES[0]![0])} AND ${inRanges(column, SPACED_RANGES)}`;

/** SQL: whether the text in `column` holds a character of the covering blocks (those worth walking). */
export const mayChangeSql = (column: string) =>
  `${column} GLOB '*[' || char(${COVERING_BLOCKS.map(([from, to]) => `${hex(from)}, 0x2D, ${hex(to)}`).join(", ")}) || ']*'`;

/** A condition on a table's rows (positional `?` parameters) and its parameters, in order. */
export type RowScope = { sql: string; params: unknown[] };

/**
 * SQL: the search form of `column` for the rows of `table` in `scope` that may change, as a subquery
 * `(id, form, bare)`: `form` the text with a space before and after each character of SPACED_RANGES,
 * `bare` whether one of those characters lacks a space on either side, as in a text the app never
 * spaced. Each character is tested once: a step appends the character before it, whose test it carries.
 */
function formsOf(table: string, column: string, scope: RowScope): RowScope {
  const walk = `WITH RECURSIVE \`walk\`(\`id\`, \`rest\`, \`c\`, \`prev\`, \`psp\`, \`pp\`, \`done\`, \`bare\`) AS (SELECT \`id\`, \`${column}\`, unicode(\`${column}\`), '', 0, '', '', 0 FROM \`${table}\` WHERE ${scope.sql} AND ${mayChangeSql(`\`${column}\``)} UNION ALL SELECT \`id\`, substr(\`rest\`, 2), unicode(substr(\`rest\`, 2)), substr(\`rest\`, 1, 1), ${isSpacedSql("`c`")}, \`prev\`, \`done\` || CASE WHEN \`psp\` THEN ' ' || \`prev\` || ' ' ELSE \`prev\` END, \`bare\` OR (\`psp\` AND (\`pp\` <> ' ' OR substr(\`rest\`, 1, 1) <> ' ')) FROM \`walk\` WHERE \`rest\` <> '')`;
  return {
    sql: `(${walk} SELECT \`id\`, \`done\` || CASE WHEN \`psp\` THEN ' ' || \`prev\` || ' ' ELSE \`prev\` END AS \`form\`, \`bare\` OR \`psp\` AS \`bare\` FROM \`walk\` WHERE \`rest\` = '')`,
    params: scope.params,
  };
}

/** What one table's full-text index reads: its FTS5 table, and per index column the row's text in search form. */
export type IndexedText = {
  table: string;
  fts: string;
  /** FTS column → the columns it reads: [text, its search form], or [description_text] alone. */
  columns: Record<string, readonly [string, string] | readonly [string]>;
};

/**
 * The statements that bring the rows of `scope` to what the app writes today (migration 0012): each
 * text's search form where it differs from the text, `description_text` spaced where it is not
 * already, then their index entries written anew. Run again on the same rows they change nothing: a
 * form is computed from its text, and a description the app (or an earlier run) spaced is left as it
 * is. `exclude` is a condition on the rows whose base row must not be written (the fence of an account
 * that has left the shard).
 */
export function searchFormStatements(text: IndexedText, scope: RowScope, exclude: string): RowScope[] {
  const { table, fts, columns } = text;
  const writable = { sql: `${scope.sql} AND NOT (${exclude})`, params: scope.params };
  const forms = Object.values(columns).map(([source, form]) => {
    const of = formsOf(table, source, writable);
    const sql =
      form === undefined
        ? `UPDATE \`${table}\` SET \`${source}\` = \`f\`.\`form\` FROM ${of.sql} AS \`f\` WHERE \`f\`.\`id\` = \`${table}\`.\`id\` AND \`f\`.\`bare\``
        : `UPDATE \`${table}\` SET \`${form}\` = \`f\`.\`form\` FROM ${of.sql} AS \`f\` WHERE \`f\`.\`id\` = \`${table}\`.\`id\` AND \`f\`.\`form\` <> \`${table}\`.\`${source}\` AND \`${table}\`.\`${form}\` IS NOT \`f\`.\`form\``;
    return { sql, params: of.params };
  });
  const indexed = Object.entries(columns);
  const values = indexed.map(([, [source, form]]) => (form ? `coalesce(\`${form}\`, \`${source}\`)` : `\`${source}\``));
  return [
    ...forms,
    {
      sql: `DELETE FROM \`${fts}\` WHERE \`rowid\` IN (SELECT \`id\` FROM \`${table}\` WHERE ${scope.sql})`,
      params: scope.params,
    },
    {
      sql: `INSERT INTO \`${fts}\` (\`rowid\`, ${indexed.map(([name]) => `\`${name}\``).join(", ")}) SELECT \`id\`, ${values.join(", ")} FROM \`${table}\` WHERE ${scope.sql}`,
      params: scope.params,
    },
  ];
}
