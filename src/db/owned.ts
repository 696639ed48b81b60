/**
 * Reads and writes of account-owned rows, shared by every resource table that
 * has `id` and `account_id`: each write is scoped to `(id, account_id)` and to
 * the caller's reach (src/db/reach.ts) in one statement, and only when it
 * touches nothing do we look again to tell 404 from 403 (docs/api.md, "Access").
 *
 * Every write names its writer (`Writer`): an insert sets `created_by` and
 * `updated_by` to its actor, an update `updated_by` only, and a delete stamps
 * `updated_by` in the same batch just before it deletes, so the change log's
 * tombstone says who deleted the row (migrations/0022_change_actors.sql; the
 * stamp alone fires no change-log trigger). Who writes and how far they reach
 * are apart: the writer is recorded, the reach (a parameter of its own, as on
 * reads) narrows which rows the write may touch.
 */
import { and, eq, sql, type SQL } from "drizzle-orm";
import type { SQLiteColumn, SQLiteTable } from "drizzle-orm/sqlite-core";
import { clock } from "../core/clock";
import type { Reach } from "../core/env";
import { database, preparedOnce } from "./client";
import { keyset, type Bound } from "./keyset";
import { ownedOr404, throwMissingOrForbidden } from "./ownership";
import { beyondReach, tableReach, type InLists } from "./reach";
import { assertVersion, missedOwnRow, versionIs, type Expected } from "./versions";

type OwnedColumns = {
  id: SQLiteColumn;
  account_id: SQLiteColumn;
  updated_at: SQLiteColumn;
  version: SQLiteColumn;
  created_by: SQLiteColumn;
  updated_by: SQLiteColumn;
};
export type OwnedTable = SQLiteTable & OwnedColumns;

/**
 * Who writes: the account the write is scoped to, and its actor as stored in
 * `created_by`/`updated_by` (`person:<id>` or `client:<id>`, src/auth/actor.ts).
 */
export type Writer = { accountId: number; actor: string };

/**
 * What the rows are called in answers; how they lie in lists, for callers whose reach is some lists
 * (none for categories); and a hook turning a database error into the client's (an unknown category).
 */
type Options = { what: string; inLists?: InLists; mapError?: (error: unknown) => never };

export function ownedRows<T extends OwnedTable>(
  table: T,
  {
    what,
    inLists,
    mapError = (e) => {
      throw e;
    },
  }: Options,
) {
  type Row = T["$inferSelect"];
  type Insert = Omit<
    T["$inferInsert"],
    "id" | "account_id" | "created_at" | "updated_at" | "version" | "created_by" | "updated_by"
  >;
  // drizzle cannot infer query types over a generic table; the casts below restore the concrete row type.
  const anyTable = table as unknown as SQLiteTable;
  // With `expected` versions (If-Match), the check is part of the write's WHERE: atomic under races.
  // The caller's reach is part of the write's WHERE too: a row beyond it is never touched.
  const owned = (id: number, accountId: number, expected: Expected, acts: SQL | undefined) =>
    and(eq(table.id, id), eq(table.account_id, accountId), versionIs(table.version, expected), acts);
  const reachOf = (reach: Reach) => tableReach(reach, { createdBy: table.created_by, inLists });

  // The hot reads (get by id, pages) as prepared queries.
  const prepared = preparedOnce((db) => {
    const id = sql.placeholder("id");
    const page = (bound: Bound<typeof id>) => {
      const { where, orderBy } = keyset([table.id], bound);
      return db
        .select()
        .from(anyTable)
        .where(and(eq(table.account_id, sql.placeholder("accountId")), where))
        .orderBy(...orderBy)
        .limit(sql.placeholder("take"))
        .prepare();
    };
    const from = (direction: "after" | "before", inclusive: boolean) => page({ direction, key: [id], inclusive });
    return {
      byId: db.select().from(anyTable).where(eq(table.id, id)).prepare(),
      pages: {
        first: page(null),
        after: from("after", false),
        before: from("before", false),
        "after-inclusive": from("after", true),
        "before-inclusive": from("before", true),
      },
    };
  });

  return {
    what,

    async insert(d1: D1Database, { accountId, actor }: Writer, values: Insert): Promise<Row> {
      const row = await database(d1)
        .insert(anyTable)
        .values({ ...values, account_id: accountId, created_by: actor, updated_by: actor } as never)
        .returning()
        .get()
        .catch(mapError);
      return row as Row;
    },

    /** The row, if the caller's account owns it and it is within `reach` (404 or 403 otherwise). */
    async get(d1: D1Database, accountId: number, id: number, reach: Reach): Promise<Row> {
      const within = reachOf(reach);
      if (within.acts === undefined) {
        const row = await prepared(d1).byId.get({ id });
        return ownedOr404(row as (Row & { account_id: number | null }) | undefined, accountId, what, { table, id });
      }
      const found = await database(d1)
        .select({
          row: anyTable,
          acts: sql<number>`${within.acts}`.as("acts"),
          sees: sql<number>`${within.sees ?? sql`1`}`.as("sees"),
        })
        .from(anyTable)
        .where(eq(table.id, id))
        .get();
      const row = ownedOr404(found?.row as (Row & { account_id: number | null }) | undefined, accountId, what, {
        table,
        id,
      });
      if (!found!.acts) throw beyondReach(reach, what, Boolean(found!.sees));
      return row;
    },

    /**
     * Changes only the fields given and counts a new version; a field that is
     * `undefined` counts as not given (as drizzle's `set` treats it), and an
     * empty change reads the row unchanged (and names no new writer). Only
     * within `reach`, and only at one of the `expected` versions, if given
     * (412 otherwise).
     */
    async update(
      d1: D1Database,
      { accountId, actor }: Writer,
      id: number,
      values: Partial<Insert>,
      reach: Reach,
      expected: Expected = null,
    ): Promise<Row> {
      if (Object.values(values).every((value) => value === undefined)) {
        const row = await this.get(d1, accountId, id, reach);
        assertVersion((row as { version: number }).version, expected, what);
        return row;
      }
      const within = reachOf(reach);
      const row = await database(d1)
        .update(anyTable)
        .set({
          ...values,
          updated_at: new Date(clock.now()),
          updated_by: actor,
          version: sql`${table.version} + 1`,
        } as never)
        .where(owned(id, accountId, expected, within.acts))
        .returning()
        .get()
        .catch(mapError);
      return (
        (row as Row | undefined) ??
        throwMissingOrForbidden(d1, table, id, accountId, what, missedOwnRow(what, expected), within)
      );
    },

    /**
     * Deletes the row (only within `reach`, and only at one of the `expected`
     * versions, if given), stamped with its deleter first in the same
     * transaction, and returns it, so the caller can clean up what it referenced.
     */
    async delete(
      d1: D1Database,
      { accountId, actor }: Writer,
      id: number,
      reach: Reach,
      expected: Expected = null,
    ): Promise<Row> {
      const within = reachOf(reach);
      const target = owned(id, accountId, expected, within.acts);
      const db = database(d1);
      const [, deleted] = await db.batch([
        db
          .update(anyTable)
          .set({ updated_by: actor } as never)
          .where(target),
        db.delete(anyTable).where(target).returning(),
      ]);
      const row = (deleted as Row[])[0];
      return (
        (row as Row | undefined) ??
        throwMissingOrForbidden(d1, table, id, accountId, what, missedOwnRow(what, expected), within)
      );
    },

    /** One keyset page of the account's rows, over the `(account_id, id)` index. */
    async page(d1: D1Database, accountId: number, bound: Bound, take: number): Promise<Row[]> {
      const pages = prepared(d1).pages;
      const query = bound === null ? pages.first : pages[`${bound.direction}${bound.inclusive ? "-inclusive" : ""}`];
      return (await query.all({ accountId, id: bound?.key[0] ?? 0, take })) as Row[];
    },
  };
}
