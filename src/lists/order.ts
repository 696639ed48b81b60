/**
 * The owner's order of a list (docs/api.md, "The order of a list"): a whole new order, every member's id,
 * or one member moved before another (or to the end). Either is one D1 batch, applied atomically and
 * checked inside its own statements: the list must be the caller's, within their reach
 * (src/db/reach.ts) and, with If-Match, at a version it names; the members named must be the list's.
 * The positions are written as src/db/list-positions.ts says, inside the batch bracket of ./membership.ts,
 * so a batch that changes the order moves the list's version (its ETag, the change feed, a webhook's
 * `list.membership_changed`) once, and one that changes nothing moves nothing. The same batch reads the
 * list before (to answer 404, 403, 412 or 400) and after the write (the answer, at the version written).
 */
import type { Reach } from "../core/env";
import type { FieldError } from "../core/problem";
import { moveSql, reorderSql } from "../db/list-positions";
import type { Writer } from "../db/owned";
import { ownedOr404 } from "../db/ownership";
import { beyondReach } from "../db/reach";
import { lists, type List } from "../db/schema";
import { rowMapper } from "../db/search/raw-rows";
import { preconditionFailed, type Expected } from "../db/versions";
import { fieldsError } from "../http/validation";
import { listBatch } from "./membership";
import { MAX_NAMED, type OrderChange } from "./schemas";

/**
 * The parameters of every statement below: ?1 the list, ?2 the moved member (or the ids, as JSON), ?3 the
 * member it goes before (NULL: the end), ?4 the account, ?5 and ?6 the lists the caller may change and
 * the creator whose rows they may change, ?8 the lists they see (src/core/env.ts `Reach`, each NULL where
 * the reach does not narrow), ?7 the versions If-Match names (NULL: any).
 */
type Parameters = [
  list: number,
  moved: number | string,
  before: number | null,
  account: number,
  acts: string | null,
  createdBy: string | null,
  expected: string | null,
  sees: string | null,
];

const ACTS = "(?5 IS NULL OR created_by = ?6 OR id IN (SELECT value FROM json_each(?5)))";
const SEES = "(?8 IS NULL OR id IN (SELECT value FROM json_each(?8)))";
/** The caller may write the list at the version they expect. */
const MAY_WRITE = `EXISTS (SELECT 1 FROM lists WHERE id = ?1 AND account_id = ?4 AND ${ACTS}
  AND (?7 IS NULL OR version IN (SELECT value FROM json_each(?7))))`;

const OWNER = `SELECT account_id, version, ${ACTS} AS acts, ${SEES} AS sees FROM lists WHERE id = ?1`;
const AFTER = "SELECT * FROM lists WHERE id = ?1";
const MOVE = moveSql(MAY_WRITE);
const REORDER = reorderSql(MAY_WRITE);
const MEMBERS = `SELECT
  EXISTS (SELECT 1 FROM list_pinpoints WHERE list_id = ?1 AND pinpoint_id = ?2) AS moved,
  (?3 IS NULL OR EXISTS (SELECT 1 FROM list_pinpoints WHERE list_id = ?1 AND pinpoint_id = ?3)) AS before`;

/**
 * How the ids sent differ from the members: those sent that are not members (their index in `ids`, up to
 * MAX_NAMED, and how many in all), the members not sent (up to MAX_NAMED, in the list's order) and the
 * number of members. The ids are distinct (checked before).
 */
const DIFFERENCE = [
  `SELECT key, value, count(*) OVER () AS total FROM json_each(?2)
    WHERE value NOT IN (SELECT pinpoint_id FROM list_pinpoints WHERE list_id = ?1) ORDER BY key LIMIT ${MAX_NAMED}`,
  `SELECT pinpoint_id FROM list_pinpoints WHERE list_id = ?1 AND pinpoint_id NOT IN (SELECT value FROM json_each(?2))
    ORDER BY position, pinpoint_id LIMIT ${MAX_NAMED}`,
  "SELECT count(*) AS n FROM list_pinpoints WHERE list_id = ?1",
];

const toList = rowMapper(lists);

/** Binds the parameters a statement names: D1 takes as many values as its highest `?N`. */
function prepared(d1: D1Database, sql: string, parameters: Parameters): D1PreparedStatement {
  const highest = Math.max(0, ...[...sql.matchAll(/\?(\d+)/g)].map((match) => Number(match[1])));
  return d1.prepare(sql).bind(...parameters.slice(0, highest));
}

type Owner = { account_id: number; version: number; acts: number; sees: number };

/** 404 or 403 for a list that is not the caller's or beyond their reach; 412 for one at another version. */
function checkOwner(owner: Owner | undefined, listId: number, accountId: number, reach: Reach, expected: Expected) {
  ownedOr404(owner, accountId, "list", { table: lists, id: listId });
  if (!owner!.acts) throw beyondReach(reach, "list", Boolean(owner!.sees));
  if (expected !== null && !expected.includes(owner!.version)) throw preconditionFailed("list");
}

const notMember = "is not a member of the list";

const named = (ids: readonly number[], total: number) =>
  `${ids.join(", ")}${total > ids.length ? ` and ${(total - ids.length).toLocaleString("en-US")} more` : ""}`;

/**
 * Applies `change` to list `listId` as `writer`, within `reach` and, with `expected` versions (If-Match),
 * only at one of them; returns the list as the write left it (unchanged, at its version, when the order
 * already was the one asked for). Throws 404, 403, 412, or 400 naming each id that is not what it must be.
 */
export async function changeOrder(
  d1: D1Database,
  writer: Writer,
  listId: number,
  reach: Reach,
  change: OrderChange,
  expected: Expected,
): Promise<List> {
  const byIds = "ids" in change;
  const parameters: Parameters = [
    listId,
    byIds ? JSON.stringify(change.ids) : change.move,
    byIds ? null : change.before,
    writer.accountId,
    reach.acts === null ? null : JSON.stringify(reach.acts.lists),
    reach.acts?.createdBy ?? null,
    expected === null ? null : JSON.stringify(expected),
    reach.sees === null ? null : JSON.stringify(reach.sees),
  ];
  const run = (sql: string) => prepared(d1, sql, parameters);
  const batch = listBatch(d1, listId, writer);
  const reads = byIds ? DIFFERENCE.map(run) : [run(MEMBERS)];
  const writes = byIds ? [run(REORDER)] : [run(MOVE.spread), run(MOVE.place)];
  const results = await d1.batch([run(OWNER), ...reads, batch.open, ...writes, ...batch.close, run(AFTER)]);
  checkOwner(results[0]!.results[0] as Owner | undefined, listId, writer.accountId, reach, expected);

  const errors: FieldError[] = [];
  if (byIds) {
    const [extra, missing, [members]] = results.slice(1, 4).map((r) => r.results) as [
      { key: number; value: unknown; total: number }[],
      { pinpoint_id: number }[],
      { n: number }[],
    ];
    for (const { key } of extra) errors.push({ pointer: `/ids/${key}`, detail: notMember });
    const extraTotal = extra[0]?.total ?? 0;
    if (extraTotal > extra.length) {
      errors.push({ pointer: "/ids", detail: `names ${extraTotal - extra.length} more ids that are not members` });
    }
    const missingTotal = members!.n - (change.ids.length - extraTotal);
    if (missingTotal > 0) {
      const ids = missing.map((row) => row.pinpoint_id);
      errors.push({ pointer: "/ids", detail: `lacks members of the list: ${named(ids, missingTotal)}` });
    }
  } else {
    const [found] = results[1]!.results as { moved: number; before: number }[];
    if (!found!.moved) errors.push({ pointer: "/move", detail: notMember });
    if (!found!.before) errors.push({ pointer: "/before", detail: notMember });
  }
  if (errors.length > 0) throw fieldsError(errors);
  return toList(results.at(-1)!.results[0] as Record<string, unknown>);
}
