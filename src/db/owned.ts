/**
 * Reads and writes of account-owned rows, shared by every resource table that
 * has `id` and `account_id`: each write is scoped to `(id, account_id)` in one
 * statement, and only when it touches nothing do we look again to tell 404
 * from 403 (CONTRACT "Access").
 *
 * Every write names its writer (`Writer`): an insert sets `created_by` and
 * `updated_by` to its actor, an update `updated_by` only, and a delete stamps
 * `updated_by` in the same batch just before it deletes, so the change log's
 * tombstone says who deleted the row (migrations/0022_change_actors.sql; the
 * stamp alone fires no change-log trigger).
 */
import { and, eq, sql } from "drizzle-orm";
import type { SQLiteColumn, SQLiteTable } from "drizzle-orm/sqlite-core";
import { clock } from "../core/clock";
import { database, preparedOnce } from "./client";
import { keyset, type Bound } from "./keyset";
import { ownedOr404, throwMissingOrForbidden } from "./ownership";
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

/** Hooks for turning a database error into the client's error (e.g. an unknown category). */
type Options = { what: string; mapError?: (error: unknown) => never };

export function ownedRows<T extends OwnedTable>(
  table: T,
  {
    what,
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
  const owned = (id: number, accountId: number, expected: Expected) =>
    and(eq(table.id, id), eq(table.account_id, accountId), versionIs(table.version, expected));

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

    async get(d1: D1Database, accountId: number, id: number): Promise<Row> {
      const row = await prepared(d1).byId.get({ id });
      return ownedOr404(row as (Row & { account_id: number | null }) | undefined, accountId, what, { table, id });
    },

    /**
     * Changes only the fields given and counts a new version; a field that is
     * `undefined` counts as not given (as drizzle's `set` treats it), and an
     * empty change reads the row unchanged (and names no new writer). Only at
     * one of the `expected` versions, if given (412 otherwise).
     */
    async update(
      d1: D1Database,
      { accountId, actor }: Writer,
      id: number,
      values: Partial<Insert>,
      expected: Expected = null,
    ): Promise<Row> {
      if (Object.values(values).every((value) => value === undefined)) {
        const row = await this.get(d1, accountId, id);
        assertVersion((row as { version: number }).version, expected, what);
        return row;
      }
      const row = await database(d1)
        .update(anyTable)
        .set({
          ...values,
          updated_at: new Date(clock.now()),
          updated_by: actor,
          version: sql`${table.version} + 1`,
        } as never)
        .where(owned(id, accountId, expected))
        .returning()
        .get()
        .catch(mapError);
      return (
        (row as Row | undefined) ??
        throwMissingOrForbidden(d1, table, id, accountId, what, missedOwnRow(what, expected))
      );
    },

    /**
     * Deletes the row (only at one of the `expected` versions, if given),
     * stamped with its deleter first in the same transaction, and returns it,
     * so the caller can clean up what it referenced.
     */
    async delete(d1: D1Database, { accountId, actor }: Writer, id: number, expected: Expected = null): Promise<Row> {
      const db = database(d1);
      const [, deleted] = await db.batch([
        db
          .update(anyTable)
          .set({ updated_by: actor } as never)
          .where(owned(id, accountId, expected)),
        db
          .delete(anyTable)
          .where(owned(id, accountId, expected))
          .returning(),
      ]);
      const row = (deleted as Row[])[0];
      return (
        (row as Row | undefined) ??
        throwMissingOrForbidden(d1, table, id, accountId, what, missedOwnRow(what, expected))
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
