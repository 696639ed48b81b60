/**
 * Pages of a collection over HTTP (CONTRACT "Pagination"): the `limit` and
 * `cursor` parameters, and the envelope `{results, next, previous}` whose
 * links carry encrypted cursors (cursor.ts). The rows of a page come from a
 * keyset query (db/keyset.ts), by ascending id unless the collection orders
 * otherwise.
 */
import type { Context } from "hono";
import * as z from "zod";
import type { AppEnv } from "../core/env";
import type { Bound } from "../db/keyset";
import { decodeCursor, encodeCursor, type Position } from "./cursor";
import { queryCredentials } from "./middleware/query-parameters";

export const DEFAULT_LIMIT = 20;
export const MAX_LIMIT = 1000;

/** `limit`: 0 or absent means the default; above the maximum it is clipped (existing clients ask for 400). */
export const limitParam = z
  .string()
  .regex(/^\d+$/, "must be a non-negative integer")
  .optional()
  .transform((value) => {
    const n = value === undefined ? 0 : Number(value);
    return n === 0 ? DEFAULT_LIMIT : Math.min(n, MAX_LIMIT);
  });

/** Query parameters every collection accepts; unknown ones are ignored. */
export const pageQuery = z.object({
  limit: limitParam.meta({
    description: `Items per page: ${DEFAULT_LIMIT} when absent or 0; larger than ${MAX_LIMIT} means ${MAX_LIMIT}`,
    // What the digits stand for (openapi/document.ts): clients that size pages from it may ask for the maximum.
    inputSchema: { type: "integer", minimum: 0, maximum: MAX_LIMIT, default: DEFAULT_LIMIT },
  }),
  // A cursor is bound to its filters without holding them, so it stays short; the bound makes a forged one cheap to refuse.
  cursor: z.string().max(4096).optional().meta({ description: "Opaque; comes with a page's next and previous URLs" }),
});

export type PageQuery = z.output<typeof pageQuery>;

/** A row's position in the collection's order: one value per sort key, e.g. `[distance, id]`. */
export type SortKeyOf<Row> = (row: Row) => readonly (number | string)[];

/**
 * How a page's rows become JSON: one at a time, or (`pageJson`) all at once, for rows that need
 * something read for the whole page first (the names of who wrote them: one query, not one per row).
 */
export type RowsToJson<Row, Item> =
  { toJson: (row: Row) => Item; pageJson?: never } | { pageJson: (rows: Row[]) => Promise<Item[]>; toJson?: never };

export type PageOptions<Row extends object, Item> = RowsToJson<Row, Item> & {
  /** The collection's name, e.g. "pinpoints"; cursors of one collection fail on another. */
  collection: string;
  query: PageQuery;
  /** Filters in force; carried in the next/previous URLs and bound into the cursor. */
  filters?: Record<string, number | string>;
  /** Reads up to `take` rows from `bound`, in the order `keyset()` gives. */
  fetch: (bound: Bound, take: number) => Promise<Row[]>;
  /** The row's sort key; `[row.id]` by default, for rows in id order. */
  keyOf?: SortKeyOf<Row>;
};

const byId = (row: unknown) => [(row as { id: number }).id];

export type Page<Item> = { results: Item[]; next: string | null; previous: string | null };

/** The schema of a `Page<Item>` of `item`, for the API reference. */
export const pageOf = <Item extends z.ZodType>(item: Item) =>
  z.object({
    results: z.array(item),
    next: z.url().nullable().meta({ description: "The next page, or null on the last page" }),
    previous: z.url().nullable().meta({ description: "The previous page, or null on the first page" }),
  });

/** Reads one page and builds its envelope with absolute next/previous URLs. */
export async function paginate<Row extends object, Item>(
  c: Context<AppEnv>,
  options: PageOptions<Row, Item>,
): Promise<Page<Item>> {
  const { collection, query, filters = {}, fetch, keyOf = byId } = options;
  const filterText = new URLSearchParams(Object.entries(filters).map(([k, v]) => [k, String(v)])).toString();
  const { principal } = c.var;
  // A key's pages are its own: its cursors do not continue a page of the account's or of another key's.
  const reader = principal.kind === "key" ? `${principal.accountId}/key-${principal.keyId}` : principal.accountId;
  const scope = `${reader}:${collection}?${filterText}`;
  const bound = query.cursor ? await decodeCursor(c.env, query.cursor, scope) : null;

  // One row more than asked tells whether another page exists beyond this one.
  const rows = await fetch(bound, query.limit + 1);
  const hasMore = rows.length > query.limit;
  if (hasMore) rows.pop();
  if (bound?.direction === "before") rows.reverse();

  const first = rows[0];
  const last = rows[rows.length - 1];
  // Coming from a cursor, the rows on its other side existed when it was issued.
  const hasNext = bound?.direction === "before" ? true : hasMore;
  const hasPrevious = bound === null ? false : bound.direction === "after" ? true : hasMore;

  // What next and previous share, built once: the path, the filters and the limit in force.
  const base = new URL(c.req.path, c.req.url);
  for (const [name, value] of Object.entries(filters)) base.searchParams.set(name, String(value));
  base.searchParams.set("limit", String(query.limit));
  // A credential in the query (a token, or a publishable key in a page's URL) goes on to the next page.
  const credentials = queryCredentials(c);
  const link = async (position: Position) => {
    const url = new URL(base);
    url.searchParams.set("cursor", await encodeCursor(c.env, scope, position));
    for (const [name, value] of credentials) url.searchParams.set(name, value);
    return url.toString();
  };
  // An empty page (e.g. everything after the cursor was deleted) links back to where it started.
  const next = hasNext
    ? await link(
        last ? { direction: "after", key: keyOf(last) } : { direction: "after", key: bound!.key, inclusive: true },
      )
    : null;
  const previous = hasPrevious
    ? await link(
        first ? { direction: "before", key: keyOf(first) } : { direction: "before", key: bound!.key, inclusive: true },
      )
    : null;
  const results = options.pageJson ? await options.pageJson(rows) : rows.map(options.toJson);
  return { results, next, previous };
}
