/**
 * Many pinpoints in one transaction: each statement inserts the rows of one
 * JSON array parameter (`INSERT … SELECT FROM json_each(?)`), so a thousand
 * rows cost a few statements instead of a thousand, and D1's limit of 100
 * bound parameters never applies. The statements go in one D1 batch: all of
 * them are written or none. The insert triggers index each row for search.
 * Every row names the import's writer as `created_by` and `updated_by`.
 */
import type { Writer } from "../db/owned";
import { utf8Length } from "../core/utf8";
import { searchForm } from "../core/search-form";
import { descriptionText, tagsSearch } from "../fields/search-columns";

/** The columns a bulk insert writes, in the order each row array lists them. */
export const BULK_COLUMNS = [
  "name",
  "address",
  "altitude",
  "category_id",
  "description",
  "description_text",
  "latitude",
  "longitude",
  "media_credits",
  "tags",
  "name_search",
  "address_search",
  "tags_search",
] as const;

export type BulkRow = {
  name: string;
  address: string | null;
  altitude: number | null;
  category: number | null;
  description: string | null;
  latitude: number;
  longitude: number;
  media_credits: string | null;
  tags: string[];
};

/** One statement's parameter stays well under D1's 2 MB limit on a string value (counted in UTF-8 bytes). */
export const MAX_CHUNK_BYTES = 1_000_000;

const INSERT_SQL =
  `INSERT INTO pinpoints (account_id, created_by, updated_by, ${BULK_COLUMNS.join(", ")}) ` +
  `SELECT ?1, ?3, ?3, ${BULK_COLUMNS.map((column, i) =>
    column === "tags" ? `json(value ->> '$[${i}]')` : `value ->> '$[${i}]'`,
  ).join(", ")} ` +
  // In array order, so ascending ids follow the rows' order.
  `FROM json_each(?2) ORDER BY key`;

const asArray = (row: BulkRow) => [
  row.name,
  row.address,
  row.altitude,
  row.category,
  row.description,
  // The search index reads these, as single writes store them (fields/search-columns.ts).
  descriptionText(row.description),
  row.latitude,
  row.longitude,
  row.media_credits,
  row.tags,
  searchForm(row.name),
  searchForm(row.address),
  tagsSearch(row.tags),
];

type Chunk = { json: string; count: number };

/** Splits rows into JSON arrays of at most MAX_CHUNK_BYTES of UTF-8 each (a row larger than that alone). */
export function chunkRows(rows: readonly BulkRow[]): Chunk[] {
  const chunks: Chunk[] = [];
  let current: string[] = [];
  let bytes = 2;
  const close = () => chunks.push({ json: `[${current.join(",")}]`, count: current.length });
  for (const row of rows) {
    const text = JSON.stringify(asArray(row));
    const size = utf8Length(text);
    if (current.length > 0 && bytes + size + 1 > MAX_CHUNK_BYTES) {
      close();
      current = [];
      bytes = 2;
    }
    current.push(text);
    bytes += size + 1;
  }
  if (current.length > 0) close();
  return chunks;
}

/**
 * Inserts every row for the account in one transaction and returns the new
 * ids in the rows' order. AUTOINCREMENT gives the rows one statement inserts
 * consecutive ids in insertion order (each one more than the largest so far,
 * and nothing else writes inside the transaction), and each statement inserts
 * in array order: a statement's ids are the `count` ending at its
 * `last_row_id`. Read from the result's metadata instead of `RETURNING id`,
 * which would send a thousand rows back for every batch.
 */
export async function insertPinpoints(
  d1: D1Database,
  { accountId, actor }: Writer,
  rows: readonly BulkRow[],
): Promise<number[]> {
  if (rows.length === 0) return [];
  const statement = d1.prepare(INSERT_SQL);
  const chunks = chunkRows(rows);
  const results = await d1.batch(chunks.map((chunk) => statement.bind(accountId, chunk.json, actor)));
  return results.flatMap((result, i) => {
    const { count } = chunks[i]!;
    const first = result.meta.last_row_id - count + 1;
    return Array.from({ length: count }, (_, k) => first + k);
  });
}
