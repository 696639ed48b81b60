/**
 * The search engine: the map and text questions of pinpoints and events
 * (src/pinpoints/search.ts, src/events/search.ts) and what vector tiles read
 * (src/tiles/source.ts), over indexes the data layer keeps:
 *   geo.ts          great-circle distance, the boxes that hold a circle, SQL over the R*Tree
 *   nearest.ts      nearest first: a page read within the smallest circle that holds it
 *   text-search.ts  `q=` as FTS5 queries, relevance in tiers
 *   tile-cells.ts   the per-cell counts behind vector tiles
 *   text-index.ts   whether the full-text index is complete (not while a data fill builds it)
 *   search-form-sql.ts  the search forms computed in SQL, for the data fill of rows written before them
 *   raw-rows.ts     rows of hand-written SQL, mapped as drizzle maps its own
 *   search-sql.ts   this module: the SQL the searches share (keyset, ids, tags, tiers)
 *
 * What these modules read is not in src/db/schema.ts: drizzle cannot declare
 * it, so it is defined only in migrations, and triggers keep it in step with
 * the base rows in every write's own transaction (a later migration's
 * definition replaces an earlier one):
 * - `pinpoints_rtree`, the R*Tree of (account, longitude, latitude): created by
 *   migrations/0004_query_indexes.sql, rebuilt by migrations/0007_rtree_account_width.sql.
 * - `pinpoints_fts` and `events_fts`, contentless FTS5 indexes: created by 0004,
 *   rebuilt by migrations/0009_fts_prefix_indexes.sql and migrations/0012_search_forms.sql
 *   (whose rows already there the data fill of src/db/fills.ts indexes).
 * - Their triggers: `pinpoints_index_insert`, `pinpoints_index_text`,
 *   `events_index_insert` and `events_index_text` as 0012 defines them;
 *   `pinpoints_index_move`, `pinpoints_index_delete`, `events_index_dates` and
 *   `events_index_delete` as 0004 does. The event triggers also fill
 *   `event_occurrences` (a table of the schema) from `events.dates`.
 * - `tile_cells`, a WITHOUT ROWID table, with its triggers `pinpoints_tiles_*`,
 *   `list_pinpoints_tiles_*`, `lists_tiles_delete` and `accounts_tiles_delete`:
 *   migrations/0011_tile_cells.sql.
 */
import { sql, type SQL } from "drizzle-orm";
import { keyset, type Bound } from "../keyset";
import { rawRows } from "./raw-rows";

export const and = (conditions: SQL[]) => sql.join(conditions, sql` AND `);

/** The keyset condition (a list, empty on the first page) and order over `columns`. */
export function keysetSql(columns: SQL[], bound: Bound): { where: SQL[]; order: SQL } {
  const { where, orderBy } = keyset(columns, bound);
  return { where: where ? [where] : [], order: sql.join(orderBy, sql`, `) };
}

/** `column IN (ids…)`, or the empty condition. */
export const inList = (column: SQL, ids: readonly number[]) =>
  sql`${column} IN (${sql.join(
    ids.map((id) => sql`${id}`),
    sql`, `,
  )})`;

/** One condition per tag: the JSON array in `column` holds every one of them. */
export const hasTags = (column: SQL, tags: readonly string[]) =>
  tags.map((tag) => sql`EXISTS (SELECT 1 FROM json_each(${column}) WHERE value = ${tag})`);

/**
 * The reads of a relevance-ordered page: from the bound's tier onward (or
 * backward), the bound's own tier starting after (before) the bound's id.
 */
export function tierReads(tierCount: number, bound: Bound, idColumn: SQL): { tier: number; id?: SQL }[] {
  const backwards = bound?.direction === "before";
  const start = bound ? Number(bound.key[0]) : 1;
  const reads: { tier: number; id?: SQL }[] = [];
  for (let tier = start; tier >= 1 && tier <= tierCount; tier += backwards ? -1 : 1) {
    if (!bound || tier !== start) reads.push({ tier });
    else {
      const op = (backwards ? "<" : ">") + (bound.inclusive ? "=" : "");
      reads.push({ tier, id: sql`${idColumn} ${sql.raw(op)} ${Number(bound.key[1])}` });
    }
  }
  return reads;
}

/**
 * Reads a relevance page tier by tier, each query asking only for what the
 * page still lacks, and stops once it is full: a common word fills the page
 * from the first tier and never pays for the others.
 */
export async function readTiers(
  d1: D1Database,
  reads: { tier: number; id?: SQL }[],
  take: number,
  query: (read: { tier: number; id?: SQL }, limit: number) => SQL,
): Promise<Record<string, unknown>[]> {
  const rows: Record<string, unknown>[] = [];
  for (const read of reads) {
    if (rows.length >= take) break;
    rows.push(...(await rawRows(d1, query(read, take - rows.length))));
  }
  return rows;
}
