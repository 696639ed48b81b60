/**
 * Keyset pagination in SQL (CONTRACT "Pagination"): a page is the rows that
 * follow (or precede) a position in a total order, found with an index seek,
 * so page N costs what page 1 costs and rows added or deleted meanwhile are
 * neither skipped nor repeated. The order is a list of sort keys whose last
 * one is unique (the id): `(id)`, or composite ones such as `(distance, id)`,
 * `(rank, id)` or `(start, id)`, each ascending or descending. The cursor that
 * carries a position between requests is HTTP's business (http/cursor.ts).
 */
import {
  and,
  asc,
  desc,
  eq,
  gt,
  gte,
  lt,
  lte,
  or,
  sql,
  type Placeholder,
  type SQL,
  type SQLWrapper,
} from "drizzle-orm";
import type { SQLiteColumn } from "drizzle-orm/sqlite-core";

/** A column or SQL expression to order by, ascending unless marked descending. */
export type SortKey = SQLiteColumn | SQL | { by: SQLiteColumn | SQL; descending: true };

/** A value of a sort key in a bound: a literal, or a placeholder where a prepared query is built. */
export type KeyValue = number | string | Placeholder;

/**
 * Where a page starts: the first page (null), or after or before a position
 * (one value per sort key). `inclusive` also takes the row at the position
 * itself (an emptied page links back to where it started).
 */
export type Bound<Value = number | string> = {
  direction: "after" | "before";
  key: readonly Value[];
  inclusive?: boolean;
} | null;

// Typed as any SQL operand: drizzle's comparison overloads do not take a column-or-expression union.
type Key = { by: SQLWrapper; descending: boolean };

const normalize = (key: SortKey): Key => ("by" in key ? key : { by: key, descending: false });

/** The comparison that keeps what lies beyond a position: `>` for an ascending key read forward. */
const beyond = (greater: boolean, inclusive: boolean) => (greater ? (inclusive ? gte : gt) : inclusive ? lte : lt);

const tuple = (items: readonly unknown[]) =>
  sql`(${sql.join(
    items.map((item) => sql`${item}`),
    sql`, `,
  )})`;

/**
 * The condition and order that read one page from `bound` in `order`: the
 * first page in order, rows after the position in order, or rows before it
 * in reverse order (the caller reverses them back). A one-column order gives
 * `id > ?` / `id < ?`; a composite one whose keys share a direction a row-value
 * comparison `(a, b) > (?, ?)`, which SQLite answers with an index seek;
 * mixed directions the expanded `a > ? OR (a = ? AND b < ?)`.
 */
export function keyset(order: readonly SortKey[], bound: Bound<KeyValue>): { where: SQL | undefined; orderBy: SQL[] } {
  const keys = order.map(normalize);
  const reverse = bound?.direction === "before";
  const orderBy = keys.map(({ by, descending }) => (descending !== reverse ? desc(by) : asc(by)));
  if (bound === null) return { where: undefined, orderBy };
  if (bound.key.length !== keys.length) throw new Error("keyset: a bound needs one value per sort key");
  const inclusive = bound.inclusive === true;
  const greater = (key: Key) => key.descending === reverse;
  if (keys.length === 1) return { where: beyond(greater(keys[0]!), inclusive)(keys[0]!.by, bound.key[0]), orderBy };
  if (keys.every((key) => key.descending === keys[0]!.descending)) {
    const where = beyond(greater(keys[0]!), inclusive)(tuple(keys.map((key) => key.by)), tuple(bound.key));
    return { where, orderBy };
  }
  const last = keys.length - 1;
  const where = or(
    ...keys.map((key, i) =>
      and(
        ...keys.slice(0, i).map((before, j) => eq(before.by, bound.key[j])),
        beyond(greater(key), inclusive && i === last)(key.by, bound.key[i]),
      ),
    ),
  );
  return { where, orderBy };
}
