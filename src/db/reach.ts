/**
 * The rows a request may touch, in SQL (src/core/env.ts `Reach`, set from the caller's role by
 * src/auth/operation-access.ts; docs/people-and-roles.md explains the model). Every read and write of a
 * narrowed caller carries these conditions in its own statement, so a page stays one keyset read and a
 * write cannot land beyond them. A row beyond a caller's reach answers as docs/people-and-roles.md says:
 * one they cannot see is absent (404, as an id that does not exist: a list collaborator learns nothing
 * else of the account), one they see but may not change is 403 `role_forbidden`, naming their role.
 */
import { or, sql, type SQL } from "drizzle-orm";
import type { SQLiteColumn } from "drizzle-orm/sqlite-core";
import type { Reach } from "../core/env";
import { ApiError, notFound } from "../core/problem";

/** The reach of a caller the role table does not narrow: a client's, a member's whose role covers it all. */
export const WHOLE_ACCOUNT: Reach = { role: "account", acts: null, sees: null };

/** The condition that a row is in or of one of `lists` (SQL naming a set of list ids). */
export type InLists = (lists: SQL) => SQL;

/** How one table's rows are reached: who created a row, and how it lies in lists (none for categories). */
export type Reachable = { createdBy: SQLiteColumn; inLists?: InLists };

/** The list ids as a set SQL reads from one bound parameter, whatever their number. */
export const listSet = (lists: readonly number[]): SQL => sql`(SELECT value FROM json_each(${JSON.stringify(lists)}))`;

/** That the pinpoint with id `pinpointId` is in one of the lists: what pinpoints and events share. */
export const pinpointInLists =
  (pinpointId: SQL): InLists =>
  (lists) =>
    sql`EXISTS (SELECT 1 FROM list_pinpoints WHERE list_pinpoints.pinpoint_id = ${pinpointId} AND list_pinpoints.list_id IN ${lists})`;

/** The conditions of `reach` on one table: undefined where nothing narrows. */
export type TableReach = { reach: Reach; acts: SQL | undefined; sees: SQL | undefined };

/** The rows of a table `reach` acts on and sees, as conditions. */
export function tableReach(reach: Reach, { createdBy, inLists }: Reachable): TableReach {
  const inSome = (lists: readonly number[]): SQL =>
    inLists !== undefined && lists.length > 0 ? inLists(listSet(lists)) : sql`0`;
  const { acts, sees } = reach;
  return {
    reach,
    acts:
      acts === null
        ? undefined
        : (or(acts.createdBy === null ? undefined : sql`${createdBy} = ${acts.createdBy}`, inSome(acts.lists)) ??
          sql`0`),
    // A table without lists (categories) is shared, seen by everyone.
    sees: sees === null || inLists === undefined ? undefined : inSome(sees),
  };
}

/** Whether `reach` reads list `listId` (and so the pinpoints in it). */
export const seesList = (reach: Reach, listId: number): boolean => reach.sees === null || reach.sees.includes(listId);

/** 403 for a row the caller sees but whose change their role does not allow. */
export function roleForbidden(reach: Reach, what: string): ApiError {
  const lists = "the lists you edit, the pinpoints in them and those pinpoints' events";
  const allowed =
    reach.acts?.createdBy == null
      ? lists
      : reach.acts.lists.length > 0
        ? `what you created and ${lists}`
        : "what you created";
  return new ApiError(
    "role_forbidden",
    `Your role (${reach.role}) lets you change only ${allowed}; this ${what} is not.`,
  );
}

/** The answer for a row of the account beyond the caller's reach: 404 if they cannot see it, else 403. */
export const beyondReach = (reach: Reach, what: string, seen: boolean): ApiError =>
  seen ? roleForbidden(reach, what) : notFound(what);
