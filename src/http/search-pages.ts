/**
 * The GET of a collection that also searches (GET /v3.0/pinpoints, GET
 * /v3.0/events): without a search parameter, its plain pages in id order
 * (or a list's in its owner's order), exactly as before search existed; with one (or when the caller sees only a
 * search's view, as a publishable key does), the search's pages in the
 * search's own order, each row with its `distance` when it has one. Both
 * page as pagination.ts does, under the collection's name.
 */
import type { Context } from "hono";
import type { AppEnv } from "../core/env";
import type { Bound } from "../db/keyset";
import { paginate, type Page, type PageQuery, type SortKeyOf } from "./pagination";

/** A search's reads and the order they come in. */
export type SearchReads<Found> = {
  fetch: (bound: Bound, take: number) => Promise<Found[]>;
  keyOf: SortKeyOf<Found>;
};

export type SearchPageOptions<Query extends PageQuery, Row extends object, Found extends Row, Item extends object> = {
  /** The collection's name, e.g. "pinpoints"; cursors of one collection fail on another. */
  collection: string;
  query: Query;
  /** The query's parameters that make a search, in the order the page links carry them. */
  searchParameters: readonly (keyof Query & string)[];
  /** The filter every page keeps, searched or not (e.g. `{ list }`). */
  filters: Record<string, number | string>;
  /** Search even without a search parameter. */
  alwaysSearch: boolean;
  /** The plain pages' rows, in id order or in the order `pageKeyOf` gives. */
  page: (bound: Bound, take: number) => Promise<Row[]>;
  /** The plain pages' sort key, where it is not the id (a list in its owner's order). */
  pageKeyOf?: SortKeyOf<Row>;
  /** Called only to search, before any read: checks what the search needs, then gives its reads. */
  search: () => Promise<SearchReads<Found>>;
  /** The page's rows as JSON, in their order (pagination.ts `RowsToJson`). */
  pageJson: (rows: Row[]) => Promise<Item[]>;
};

/** One page of the collection: plain, or of the search its parameters ask for. */
export async function pageOrSearch<
  Query extends PageQuery,
  Row extends object,
  Found extends Row & { distance?: number },
  Item extends object,
>(
  c: Context<AppEnv>,
  options: SearchPageOptions<Query, Row, Found, Item>,
): Promise<Page<Item | (Item & { distance: number })>> {
  const { collection, query, filters, page, pageJson } = options;
  const given = options.searchParameters.filter((name) => query[name] !== undefined);
  if (given.length === 0 && !options.alwaysSearch)
    return paginate(c, { collection, query, filters, fetch: page, keyOf: options.pageKeyOf, pageJson });
  const { fetch, keyOf } = await options.search();
  // The links carry each search parameter as the client wrote it, which the cursor is bound to.
  const searched: Record<string, string | number> = { ...filters };
  for (const name of given) searched[name] = c.req.query(name)!;
  return paginate(c, {
    collection,
    query,
    filters: searched,
    fetch,
    keyOf,
    pageJson: async (rows) =>
      (await pageJson(rows)).map((item, i) => {
        const { distance } = rows[i]!;
        return distance === undefined ? item : { ...item, distance };
      }),
  });
}
