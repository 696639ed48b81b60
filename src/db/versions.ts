/**
 * Conditional writes on versioned rows (db/schema.ts `version`): the versions
 * a client's If-Match accepts become part of the write's WHERE clause, so the
 * check and the write are one statement and no other writer can come between
 * them (D1 has no interactive transactions). When such a write touches no row,
 * throwMissingOrForbidden (ownership.ts) tells the client why: 404, 403, or
 * 412 when the row is theirs but has changed since.
 */
import { inArray, type SQL } from "drizzle-orm";
import type { SQLiteColumn } from "drizzle-orm/sqlite-core";
import { ApiError, notFound } from "../core/problem";

/** The versions a write may change; `null` means any. */
export type Expected = readonly number[] | null;

/** The WHERE term for `expected` (undefined when any version will do). */
export function versionIs(column: SQLiteColumn, expected: Expected): SQL | undefined {
  return expected === null ? undefined : inArray(column, [...expected]);
}

export function preconditionFailed(what: string): ApiError {
  return new ApiError(
    "precondition_failed",
    `The ${what} has changed since the version If-Match names; GET it for its current ETag and decide again.`,
  );
}

/** Throws 412 unless `version` is one of `expected`. */
export function assertVersion(version: number, expected: Expected, what: string): void {
  if (expected !== null && !expected.includes(version)) throw preconditionFailed(what);
}

/**
 * What a write scoped to `(id, account_id)` and `expected` that touched the
 * caller's own row means (for throwMissingOrForbidden): with a condition, the
 * row is at another version (412); without, it vanished meanwhile (404).
 */
export function missedOwnRow(what: string, expected: Expected): ApiError {
  return expected === null ? notFound(what) : preconditionFailed(what);
}
