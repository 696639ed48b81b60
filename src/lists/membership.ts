/**
 * List membership batches (docs/api.md, "List membership"). However many items a
 * batch has (up to 1,000), it is one D1 batch of six statements (seven for an
 * addition), applied atomically: the list's owner, the named pinpoints that
 * cannot be applied, and the write itself, bracketed by the `list_batches` row
 * that makes the list's version (its ETag and change-log entry) move once per
 * batch, and only if a membership changed (migrations/0008_membership_batches.sql);
 * before that move, the list is stamped with the batch's actor as its
 * `updated_by`, only if a membership changed (src/db/owned.ts, "Writer"). New
 * members go at the end of the list's order, in the order sent
 * (src/db/list-positions.ts); the seventh statement makes room there first in
 * the rare list whose additions reached the end of the positions. The ids
 * travel as one JSON parameter expanded by json_each(), so no statement comes
 * near D1's limit of 100 bound parameters. Valid items are applied even when
 * others fail; each failure is reported by index.
 *
 * The caller's reach (src/db/reach.ts) is part of the same statements: the
 * list must be one their role lets them change (else 403 `role_forbidden`,
 * or 404 if they cannot see it), and a pinpoint they cannot see is reported
 * `not_found`, as one that does not exist.
 */
import type { Reach } from "../core/env";
import { appendedPositionSql, compactSql } from "../db/list-positions";
import type { Writer } from "../db/owned";
import { foreignElsewhere, ownedOr404 } from "../db/ownership";
import { beyondReach } from "../db/reach";
import { lists, pinpoints } from "../db/schema";
import { membershipItem, type BatchItemError, type BatchResult } from "./schemas";

type Parsed = { valid: { index: number; id: number }[]; errors: BatchItemError[] };

function parseItems(items: readonly unknown[]): Parsed {
  const parsed: Parsed = { valid: [], errors: [] };
  items.forEach((item, index) => {
    const result = membershipItem.safeParse(item);
    if (result.success) {
      parsed.valid.push({ index, id: result.data.id });
    } else {
      const sent = item !== null && typeof item === "object" ? (item as { id?: unknown }).id : undefined;
      const id = typeof sent === "number" || typeof sent === "string" ? sent : null;
      parsed.errors.push({ index, id, error: "invalid" });
    }
  });
  return parsed;
}

/**
 * The reach as parameters: ?4 the lists whose pinpoints the caller sees, ?5 the lists they may change
 * and ?6 whose creations (JSON arrays and an actor), each NULL where the reach does not narrow.
 */
const ACTS_ON_LIST = "(?5 IS NULL OR created_by = ?6 OR id IN (SELECT value FROM json_each(?5)))";
const SEES_LIST = "(?4 IS NULL OR id IN (SELECT value FROM json_each(?4)))";
const SEES_PINPOINT = `(?4 IS NULL OR EXISTS (SELECT 1 FROM list_pinpoints AS s
  WHERE s.pinpoint_id = pinpoints.id AND s.list_id IN (SELECT value FROM json_each(?4))))`;

const LIST_OWNER = `SELECT account_id, ${ACTS_ON_LIST} AS acts, ${SEES_LIST} AS sees FROM lists WHERE id = ?1`;
const OWNED_LIST = `EXISTS (SELECT 1 FROM lists WHERE id = ?1 AND account_id = ?3 AND ${ACTS_ON_LIST})`;

/**
 * The caller's pinpoints among the ids, read from the `(account_id, id)`
 * index alone: on local D1, 1,000 probes of that index cost about a seventh
 * of 1,000 lookups of the wide pinpoint rows (measured, bench/). The ids are
 * distinct (applyBatch sends a set), so json_each() needs no DISTINCT.
 */
const OWNED_PINPOINTS = `SELECT id FROM pinpoints WHERE account_id = ?3 AND id IN (SELECT value FROM json_each(?2))
  AND ${SEES_PINPOINT}`;
/** A pinpoint's account, or NULL where it does not exist or is the caller's account's but unseen by them. */
const OWNER = `(SELECT CASE WHEN account_id = ?3 AND NOT ${SEES_PINPOINT} THEN NULL ELSE account_id END
  FROM pinpoints WHERE id = j.value)`;
const MEMBER = "EXISTS (SELECT 1 FROM list_pinpoints WHERE list_id = ?1 AND pinpoint_id = j.value)";

/**
 * The named pinpoints that cannot be applied, with their owner (null if they
 * do not exist): missing or another account's, and for a removal not in the
 * list. Only these rows come back, so a valid batch of 1,000 reads back
 * nothing instead of 1,000 rows (half the batch's CPU time, measured), and
 * only these rows are looked up in the table.
 */
const CLASSIFY = {
  add: `SELECT j.value AS id, ${OWNER} AS account_id FROM json_each(?2) AS j WHERE j.value NOT IN (${OWNED_PINPOINTS})`,
  remove: `
    SELECT j.value AS id, ${OWNER} AS account_id FROM json_each(?2) AS j
    WHERE j.value NOT IN (${OWNED_PINPOINTS}) OR NOT ${MEMBER}`,
};

/** How many items the batch sends: at least as many as it adds, which is what room is made for. */
const SENT = "json_array_length(?2)";

/**
 * An addition inserts only what is not a member yet, rather than letting the insert collide, each after
 * the list's last member in the order of the batch.
 */
const WRITE = {
  add: `
    INSERT OR IGNORE INTO list_pinpoints (list_id, pinpoint_id, position)
    SELECT ?1, j.value, ${appendedPositionSql("?1", "row_number() OVER (ORDER BY j.key)", SENT)}
    FROM json_each(?2) AS j
    WHERE ${OWNED_LIST} AND j.value IN (${OWNED_PINPOINTS}) AND NOT ${MEMBER}`,
  remove: `
    DELETE FROM list_pinpoints
    WHERE list_id = ?1 AND pinpoint_id IN (SELECT value FROM json_each(?2)) AND ${OWNED_LIST}`,
};

/** Spreads the list's members out when the additions would find no room after the last one. */
const MAKE_ROOM = compactSql("?1", SENT, OWNED_LIST);

/** Opens the list's batch; the membership triggers then only mark it changed. */
const BEGIN_BATCH = "INSERT OR REPLACE INTO list_batches (list_id, changed) VALUES (?1, 0)";
/** Names the writer of a batch that changed a membership, before the version moves (and is logged). */
const STAMP =
  "UPDATE lists SET updated_by = ?3 WHERE id = ?1 AND account_id = ?2 AND EXISTS (SELECT 1 FROM list_batches WHERE list_id = ?1 AND changed = 1)";
/** Closes it: its trigger bumps the list's version once if a membership changed. */
const END_BATCH = "DELETE FROM list_batches WHERE list_id = ?1";

/**
 * The statements around a batch's writes of list `listId`, as above: `open` goes before them, `close` after,
 * in the same D1 batch. The order of a list (./order.ts) is written in such a batch too: a changed position
 * marks it as a changed membership does (migrations/0023_list_order.sql).
 */
export function listBatch(d1: D1Database, listId: number, { accountId, actor }: Writer) {
  return {
    open: d1.prepare(BEGIN_BATCH).bind(listId),
    close: [d1.prepare(STAMP).bind(listId, accountId, actor), d1.prepare(END_BATCH).bind(listId)],
  };
}

type Classified = { id: number; account_id: number | null };

/** ?4 to ?6 of the statements above, from the caller's reach (D1 takes as many values as the highest ?N). */
const reachParameters = ({ acts, sees }: Reach) => [
  sees === null ? null : JSON.stringify(sees),
  acts === null ? null : JSON.stringify(acts.lists),
  acts?.createdBy ?? null,
];

async function applyBatch(
  d1: D1Database,
  { accountId, actor }: Writer,
  listId: number,
  reach: Reach,
  items: readonly unknown[],
  operation: "add" | "remove",
): Promise<BatchResult> {
  const { valid, errors } = parseItems(items);
  const ids = JSON.stringify([...new Set(valid.map((v) => v.id))]);
  const within = reachParameters(reach);
  const batch = listBatch(d1, listId, { accountId, actor });
  const [owner, classified] = await d1.batch([
    d1.prepare(LIST_OWNER).bind(listId, null, null, ...within),
    d1.prepare(CLASSIFY[operation]).bind(listId, ids, accountId, within[0]),
    batch.open,
    ...(operation === "add" ? [d1.prepare(MAKE_ROOM).bind(listId, ids, accountId, ...within)] : []),
    d1.prepare(WRITE[operation]).bind(listId, ids, accountId, ...within),
    // The stamp names the writer of a list the write changed only, so only of one within the caller's reach.
    ...batch.close,
  ]);
  const list = (owner!.results as { account_id: number; acts: number; sees: number }[])[0];
  ownedOr404(list, accountId, "list", { table: lists, id: listId });
  if (!list!.acts) throw beyondReach(reach, "list", Boolean(list!.sees));

  const rows = classified!.results as Classified[];
  const missing = rows.filter((row) => row.account_id === null).map((row) => row.id);
  const elsewhere = await foreignElsewhere(pinpoints, missing);
  const byId = new Map(rows.map((row) => [row.id, row]));
  for (const { index, id } of valid) {
    const row = byId.get(id);
    if (!row) continue;
    const error: BatchItemError["error"] =
      row.account_id === null
        ? elsewhere.has(id)
          ? "forbidden"
          : "not_found"
        : row.account_id !== accountId
          ? "forbidden"
          : "not_member";
    errors.push({ index, id, error });
  }
  errors.sort((a, b) => a.index - b.index);
  return { total: items.length, errors };
}

export const addToList = (d1: D1Database, writer: Writer, listId: number, reach: Reach, items: readonly unknown[]) =>
  applyBatch(d1, writer, listId, reach, items, "add");

export const removeFromList = (
  d1: D1Database,
  writer: Writer,
  listId: number,
  reach: Reach,
  items: readonly unknown[],
) => applyBatch(d1, writer, listId, reach, items, "remove");
