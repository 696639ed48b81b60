/**
 * Keyset pagination shared by every collection (CONTRACT "Pagination").
 * Pages are ordered by ascending id; a cursor names the id to continue after
 * (next) or before (previous), so page N costs what page 1 costs and rows
 * added while a client pages are neither skipped nor repeated. Cursors are
 * opaque and HMAC-signed, bound to the account, collection and filters they
 * were issued for: a tampered or foreign cursor is a 400, never a 500.
 */
import { asc, desc, gt, lt, type Placeholder, type SQL } from "drizzle-orm";
import type { SQLiteColumn } from "drizzle-orm/sqlite-core";
import type { Context } from "hono";
import * as z from "zod";
import { base64urlDecode, base64urlEncode, utf8 } from "../auth/encoding";
import { hashesEqual } from "../auth/secrets";
import { hmacSign, signingKeys } from "../auth/signing";
import type { AppEnv } from "../env";
import { ApiError } from "./problem";

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
  }),
  cursor: z.string().max(1024).optional().meta({ description: "Opaque; comes with a page's next and previous URLs" }),
});

export type PageQuery = z.output<typeof pageQuery>;

/**
 * Where a page starts: the first page, after an id (next) or before an id
 * (previous). The id is a placeholder where a prepared query is built.
 */
export type Bound<Id = number> = { direction: "after" | "before"; id: Id } | null;

/**
 * A row's place in a composite order, e.g. `[distance, id]`, compared element
 * by element, all ascending; the last element is always the row's id.
 */
export type SortKey = readonly number[];

/** Where a page of a composite order starts: the first page, after or before a key. */
export type KeyBound = { direction: "after" | "before"; key: SortKey } | null;

// `k` is a bare number for id-ordered collections (the cursors issued before composite orders).
type CursorPayload = { s: string; d: "a" | "b"; k: number | number[] };

// Domain separation: a cursor signature can never be mistaken for a token signature.
const signed = (payload: string) => `cursor.${payload}`;
const SIGNATURE_BYTES = 16;

async function encodeCursor(c: Context<AppEnv>, payload: CursorPayload): Promise<string> {
  const body = base64urlEncode(utf8.encode(JSON.stringify(payload)));
  const { current } = await signingKeys(c.env);
  const signature = (await hmacSign(current, signed(body))).subarray(0, SIGNATURE_BYTES);
  return `${body}.${base64urlEncode(signature)}`;
}

const invalidCursor = (detail: string) =>
  new ApiError("invalid_cursor", detail, { errors: [{ parameter: "cursor", detail }] });

async function decodeCursor(c: Context<AppEnv>, cursor: string, scope: string): Promise<KeyBound> {
  const [body = "", signature = "", extra] = cursor.split(".");
  // base64urlDecode accepts only the canonical spelling, so no character of a cursor can change unnoticed.
  const payloadBytes = body ? base64urlDecode(body) : null;
  const signatureBytes = signature ? base64urlDecode(signature) : null;
  if (!payloadBytes || signatureBytes?.byteLength !== SIGNATURE_BYTES || extra !== undefined) {
    throw invalidCursor("The cursor is malformed; follow the next and previous URLs as given.");
  }
  // The MAC is truncated, so compare it ourselves (in constant time) rather than with verify();
  // the signature is canonical base64url, so comparing its text compares its bytes.
  const keys = await signingKeys(c.env);
  let authentic = false;
  for (const key of [keys.current, keys.previous]) {
    if (key && !authentic) {
      const expected = (await hmacSign(key, signed(body))).subarray(0, SIGNATURE_BYTES);
      authentic = hashesEqual(base64urlEncode(expected), signature);
    }
  }
  if (!authentic) throw invalidCursor("The cursor has been altered or was not issued by this service.");
  const payload = JSON.parse(utf8.decode(payloadBytes)) as CursorPayload;
  if (payload.s !== scope) throw invalidCursor("The cursor belongs to a different query; follow the URLs as given.");
  return {
    direction: payload.d === "a" ? "after" : "before",
    key: typeof payload.k === "number" ? [payload.k] : payload.k,
  };
}

/** The condition and order that read one page of `idColumn` from `bound`. */
export function keyset(
  idColumn: SQLiteColumn,
  bound: Bound<number | Placeholder>,
): { where: SQL | undefined; orderBy: SQL } {
  if (bound === null) return { where: undefined, orderBy: asc(idColumn) };
  return bound.direction === "after"
    ? { where: gt(idColumn, bound.id), orderBy: asc(idColumn) }
    : { where: lt(idColumn, bound.id), orderBy: desc(idColumn) };
}

export type PageOptions<Row extends { id: number }, Item> = {
  /** The collection's name, e.g. "pinpoints"; cursors of one collection fail on another. */
  collection: string;
  query: PageQuery;
  /** Filters in force; carried in the next/previous URLs and bound into the cursor. */
  filters?: Record<string, number | string>;
  /** Reads up to `take` rows from `bound`, in the order `keyset()` gives. */
  fetch: (bound: Bound, take: number) => Promise<Row[]>;
  toJson: (row: Row) => Item;
};

/** A page in a composite order: `keyOf` gives a row's sort key, `fetch` reads from a key bound. */
export type SortedPageOptions<Row, Item> = Omit<PageOptions<{ id: number }, Item>, "fetch" | "toJson"> & {
  fetch: (bound: KeyBound, take: number) => Promise<Row[]>;
  keyOf: (row: Row) => SortKey;
  toJson: (row: Row) => Item;
};

export type Page<Item> = { results: Item[]; next: string | null; previous: string | null };

/** The schema of a `Page<Item>` of `item`, for the API reference. */
export const pageOf = <Item extends z.ZodType>(item: Item) =>
  z.object({
    results: z.array(item),
    next: z.url().nullable().meta({ description: "The next page, or null on the last page" }),
    previous: z.url().nullable().meta({ description: "The previous page, or null on the first page" }),
  });

/** Reads one page in id order and builds its envelope with absolute next/previous URLs. */
export function paginate<Row extends { id: number }, Item>(
  c: Context<AppEnv>,
  { fetch, ...options }: PageOptions<Row, Item>,
): Promise<Page<Item>> {
  return paginateSorted(c, {
    ...options,
    fetch: (bound, take) => fetch(bound && { direction: bound.direction, id: bound.key[0]! }, take),
    keyOf: (row) => [row.id],
  });
}

/** The key just before (`-1`) or after (`+1`) `key` in id, so a bound includes the row at `key`. */
const nudge = (key: SortKey, by: 1 | -1): SortKey => [...key.slice(0, -1), key[key.length - 1]! + by];

/** Reads one page in the order of `keyOf` and builds its envelope with absolute next/previous URLs. */
export async function paginateSorted<Row, Item>(
  c: Context<AppEnv>,
  { collection, query, filters = {}, fetch, keyOf, toJson }: SortedPageOptions<Row, Item>,
): Promise<Page<Item>> {
  const filterText = Object.entries(filters)
    .map(([k, v]) => `${k}=${typeof v === "number" ? v : encodeURIComponent(v)}`)
    .join("&");
  const scope = `${c.var.principal.accountId}:${collection}?${filterText}`;
  const bound = query.cursor ? await decodeCursor(c, query.cursor, scope) : null;

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
  const queryToken = c.req.query("access_token");
  const link = async (d: "a" | "b", key: SortKey) => {
    const url = new URL(base);
    const k = key.length === 1 ? key[0]! : [...key];
    url.searchParams.set("cursor", await encodeCursor(c, { s: scope, d, k }));
    if (queryToken !== undefined) url.searchParams.set("access_token", queryToken);
    return url.toString();
  };
  // An empty page (e.g. everything after the cursor was deleted) links back to where it started.
  const next = hasNext ? await link("a", last ? keyOf(last) : nudge(bound!.key, -1)) : null;
  const previous = hasPrevious ? await link("b", first ? keyOf(first) : nudge(bound!.key, 1)) : null;
  return { results: rows.map(toJson), next, previous };
}
