/**
 * Moving an account to another shard while it keeps serving (docs/scaling.md,
 * "Moving an account online"): copy in batches, catch up from the change log,
 * switch with a short write pause for that account alone, delete the source's
 * rows. Written against `Batch`, one transaction of statements, so the same
 * code runs on Worker bindings (test/shards.test.ts) and on `wrangler d1
 * execute` (scripts/accounts.ts). Imports nothing Worker-only.
 *
 * Each copy loop ends at its first short batch: a row written meanwhile is in
 * the change log after the head noted before the copy (or, in a table no log
 * covers, copied again in the pause), so a steady writer cannot keep a loop
 * chasing its newest rows.
 *
 * The target never loses a row to the copy: a row it holds under one of the
 * account's ids but of another account (ids that collided before ranges were
 * recorded, src/db/id-ranges.ts) stops the move with a MoveError before the
 * switch, never overwritten, never skipped. A row that references a place the
 * target does not hold yet (a place written on the source after the places
 * were copied) brings that place along first.
 *
 * Every write of the move on a fenced account runs as the `mover` (the fence
 * triggers of migration 0014 let it through): its batch lifts the fence to
 * `mover` first and puts it back last, inside one transaction.
 */
import { unfinishedFills } from "./fills.ts";
import { claimShardRange, type Batch, type Row, type Statement } from "./id-ranges.ts";
import { DIRECTORY, PLACEMENT_FRESH_MS } from "./shard-plan.ts";

export type { Batch, Row, Statement } from "./id-ranges.ts";

export type MoveOptions = {
  /** The account's id. */
  account: number;
  /** The binding name of the shard to move it to. */
  to: string;
  /** The directory and every shard, by binding name. */
  directory: Batch;
  shards: Record<string, Batch>;
  /** Rows per copy batch. */
  batchRows?: number;
  /** The longest the source's write pause lasts if the move dies in it (ms). */
  pauseLimitMs?: number;
  /** Waited after the switch before the target takes writes: every isolate's placement has been re-read by then. */
  routeWaitMs?: number;
  /** Waited before the source's rows are deleted, for requests still reading them. */
  graceMs?: number;
  /** Aborted (SIGINT): before the switch the move stops and leaves the account on its source. */
  signal?: AbortSignal;
  log?: (line: string) => void;
  now?: () => number;
  sleep?: (ms: number) => Promise<void>;
};

export type MoveReport = {
  from: string;
  to: string;
  copied: number;
  caughtUp: number;
  pauseMs: number;
  purged: boolean;
};

export class MoveError extends Error {
  override name = "MoveError";
}

const q = (sql: string, ...params: unknown[]): Statement => ({ sql, params });

/**
 * A table the move copies, and what makes a row the target already holds under the same key another
 * account's (a collision: the move refuses it, never overwrites or skips it).
 */
type Table = {
  name: string;
  key: readonly string[];
  /** SQL: the target's row `t` with the key of the copied row `j` is another account's; `?` is the account. */
  foreign?: string;
  /** The change-log type of its rows: the target's log entry of another account for the same id collides too. */
  logged?: string;
  /** A column of another account's rows a row may not take either (besides the key). */
  unique?: string;
  /** The column naming a place the row references, which the target must hold first. */
  place?: string;
};

const ANOTHER_ACCOUNT = "t.account_id IS NOT ?";
const CATEGORIES: Table = { name: "categories", key: ["id"], foreign: ANOTHER_ACCOUNT, logged: "category" };
const PINPOINTS: Table = { name: "pinpoints", key: ["id"], foreign: ANOTHER_ACCOUNT, logged: "pinpoint" };
const LISTS: Table = { name: "lists", key: ["id"], foreign: ANOTHER_ACCOUNT, logged: "list" };
const EVENTS: Table = {
  name: "events",
  key: ["id"],
  foreign: ANOTHER_ACCOUNT,
  logged: "event",
  place: "pinpoint_id",
};
/** A list's memberships are copied once the list is known to be the account's: no other account's row has its key. */
const MEMBERSHIPS: Table = { name: "list_pinpoints", key: ["list_id", "pinpoint_id"], place: "pinpoint_id" };
const IDEMPOTENCY: Table = { name: "idempotency_keys", key: ["account_id", "key"] };
const WEBHOOKS: Table = { name: "webhooks", key: ["id"], foreign: ANOTHER_ACCOUNT };
/** The account's webhooks are copied first, so an attempt of another webhook is another account's. */
const DELIVERIES: Table = {
  name: "webhook_deliveries",
  key: ["id"],
  foreign: "t.webhook_id IS NOT j.value ->> '$.webhook_id'",
};
const OUTBOX: Table = { name: "webhook_outbox", key: ["id"], foreign: ANOTHER_ACCOUNT };
const CHANGES: Table = { name: "changes", key: ["type", "object_id"], foreign: ANOTHER_ACCOUNT, unique: "seq" };

/** The account's tables, in the order their rows can be inserted (foreign keys), with their change-log types. */
const OWNED = [
  { table: CATEGORIES, type: "category" },
  { table: PINPOINTS, type: "pinpoint" },
  { table: LISTS, type: "list" },
  { table: EVENTS, type: "event" },
] as const;

/** Where the move copies: the source, the target (as the mover), the account and its way there. */
type Copy = { source: Batch; write: Batch; account: number; from: string; to: string; batchRows: number };

const field = (column: string) => `j.value ->> '$.${column}'`;
const matches = (table: Table, alias: string) => table.key.map((c) => `${alias}."${c}" = ${field(c)}`).join(" AND ");
/** The account, bound once for each `?` of `sql`. */
const accountFor = (sql: string | undefined, account: number) =>
  Array<number>((sql ?? "").split("?").length - 1).fill(account);

/**
 * SQL: which of `rows` collide with another account's rows of the target, as (what, id): the same key,
 * the same unique value, or (for a logged table) the same object in the change log.
 */
function collisions(table: Table, rows: Row[], account: number): Statement | null {
  if (!table.foreign) return null;
  const slim = JSON.stringify(
    rows.map((row) =>
      Object.fromEntries(
        [...table.key, ...(table.unique ? [table.unique] : []), "webhook_id"]
          .filter((c) => c in row)
          .map((c) => [c, row[c]]),
      ),
    ),
  );
  const last = table.key.at(-1)!;
  const parts = [
    q(
      `SELECT '${table.name}' AS what, t."${last}" AS id FROM json_each(?) AS j JOIN "${table.name}" AS t ON ${matches(table, "t")} WHERE ${table.foreign}`,
      slim,
      ...accountFor(table.foreign, account),
    ),
  ];
  if (table.unique) {
    parts.push(
      q(
        `SELECT '${table.name} (${table.unique})', t."${table.unique}" FROM json_each(?) AS j JOIN "${table.name}" AS t ON t."${table.unique}" = ${field(table.unique)} WHERE ${table.foreign}`,
        slim,
        ...accountFor(table.foreign, account),
      ),
    );
  }
  if (table.logged) {
    parts.push(
      q(
        `SELECT 'changes of ${table.name}', t.object_id FROM json_each(?) AS j JOIN changes AS t ON t.type = '${table.logged}' AND t.object_id = ${field("id")} WHERE ${ANOTHER_ACCOUNT}`,
        slim,
        account,
      ),
    );
  }
  return q(parts.map((p) => p.sql).join(" UNION ALL "), ...parts.flatMap((p) => p.params));
}

/** SQL: the places `rows` reference that the target does not hold (yet). */
function missingPlaces(table: Table, rows: Row[]): Statement | null {
  if (!table.place) return null;
  return q(
    `SELECT DISTINCT ${field("id")} AS id FROM json_each(?) AS j
     WHERE NOT EXISTS (SELECT 1 FROM pinpoints AS t WHERE t.id = ${field("id")})`,
    JSON.stringify(rows.map((row) => ({ id: row[table.place!] }))),
  );
}

/**
 * SQL writing `rows` as the source has them, the rows travelling as one JSON parameter (a D1 statement
 * takes at most 100 parameters): with `update`, an update of the target's rows of the account first;
 * then an insert of those it does not hold. Neither writes a row that collides (see `collisions`) or
 * whose place the target lacks. Not an UPSERT: its conflict clause would override the `INSERT OR
 * REPLACE` of the change-log triggers it fires (SQLite applies the outer statement's conflict policy
 * inside triggers); not REPLACE either, which deletes first and cascades.
 */
function writes(table: Table, rows: Row[], account: number, update: boolean): Statement[] {
  const columns = Object.keys(rows[0]!);
  const json = JSON.stringify(rows);
  const guards: Statement[] = [];
  if (table.unique) {
    guards.push(
      q(
        `NOT EXISTS (SELECT 1 FROM "${table.name}" AS t WHERE t."${table.unique}" = ${field(table.unique)} AND ${table.foreign})`,
        ...accountFor(table.foreign, account),
      ),
    );
  }
  if (table.logged) {
    guards.push(
      q(
        `NOT EXISTS (SELECT 1 FROM changes AS t WHERE t.type = '${table.logged}' AND t.object_id = ${field("id")} AND ${ANOTHER_ACCOUNT})`,
        account,
      ),
    );
  }
  if (table.place) guards.push(q(`EXISTS (SELECT 1 FROM pinpoints AS t WHERE t.id = ${field(table.place)})`));
  const guard = guards.map((g) => ` AND ${g.sql}`).join("");
  const guardParams = guards.flatMap((g) => g.params);
  const updated = columns.filter((c) => !table.key.includes(c));
  const statements: Statement[] = [];
  if (update && updated.length > 0) {
    const own = table.foreign ? ` AND NOT (${table.foreign})` : "";
    statements.push(
      q(
        `UPDATE "${table.name}" AS t SET ${updated.map((c) => `"${c}" = ${field(c)}`).join(", ")}
         FROM json_each(?) AS j WHERE ${matches(table, "t")}${own}${guard}`,
        json,
        ...accountFor(own, account),
        ...guardParams,
      ),
    );
  }
  statements.push(
    q(
      `INSERT INTO "${table.name}" (${columns.map((c) => `"${c}"`).join(", ")})
       SELECT ${columns.map(field).join(", ")} FROM json_each(?) AS j
       WHERE NOT EXISTS (SELECT 1 FROM "${table.name}" AS t WHERE ${matches(table, "t")})${guard}
       ORDER BY j.key`,
      json,
      ...guardParams,
    ),
  );
  return statements;
}

/** Throws the MoveError naming every collision found: the move stops before the switch. */
function refuse(copy: Copy, found: Row[]): void {
  if (found.length === 0) return;
  const ids = new Map<string, unknown[]>();
  for (const { what, id } of found) ids.set(String(what), [...(ids.get(String(what)) ?? []), id]);
  const listed = [...ids].map(([what, list]) => `${what} ${[...new Set(list)].join(", ")}`).join("; ");
  throw new MoveError(
    `${copy.to} holds another account's rows under ids account ${copy.account} uses (${listed}): copying them ` +
      `would lose one or the other, so the move stops. Nothing was switched: the account stays whole on ${copy.from}.`,
  );
}

type PutOptions = {
  /** Update the rows the target holds of the account too (else only insert those it lacks). */
  update?: boolean;
  /** Statements of the same transaction, before and after the rows' writes. */
  before?: Statement[];
  after?: Statement[];
  /** Their missing places were copied already: rows still missing theirs are left out. */
  placesCopied?: boolean;
};

/**
 * Writes `rows` of `table` into the target (see `writes`), refusing collisions. A row whose place the
 * target lacks (written on the source after the places were copied) waits until that place is
 * copied from the source; one whose place the source no longer has is left out (the place's deletion
 * deleted it too, and the change log brings that deletion).
 */
async function put(copy: Copy, table: Table, rows: Row[], options: PutOptions = {}): Promise<void> {
  const { before = [], after = [] } = options;
  const checks = rows.length > 0 ? [collisions(table, rows, copy.account), missingPlaces(table, rows)] : [];
  const present = checks.filter((check) => check !== null);
  const rowWrites = rows.length > 0 ? writes(table, rows, copy.account, options.update ?? false) : [];
  if (present.length + before.length + rowWrites.length + after.length === 0) return;
  const results = await copy.write([...present, ...before, ...rowWrites, ...after]);
  const [found, missing] = [checks[0] ? results.shift()! : [], checks[1] ? results.shift()! : []];
  refuse(copy, found);
  if (missing.length === 0 || options.placesCopied) return;
  const ids = new Set(missing.map((row) => Number(row.id)));
  const [places] = (await copy.source([
    q(
      "SELECT * FROM pinpoints WHERE account_id = ? AND id IN (SELECT value FROM json_each(?)) ORDER BY id",
      copy.account,
      JSON.stringify([...ids]),
    ),
  ])) as [Row[]];
  await put(copy, PINPOINTS, places, { update: true });
  const waiting = rows.filter((row) => ids.has(Number(row[table.place!])));
  await put(copy, table, waiting, { update: options.update, placesCopied: true });
}

/**
 * Copies what `page(after)` selects of the source (a keyset page of at most `batchRows`, after the last
 * key `keyOf` gave) with `apply`, page after page, until a short one (see the file's header); returns
 * the last key copied, or `after` when there was nothing.
 */
async function copyPages<K>(
  source: Batch,
  batchRows: number,
  after: K,
  page: (after: K) => Statement,
  keyOf: (row: Row) => K,
  apply: (rows: Row[]) => Promise<unknown>,
): Promise<K> {
  for (;;) {
    const [rows] = (await source([page(after)])) as [Row[]];
    if (rows.length === 0) return after;
    await apply(rows);
    after = keyOf(rows.at(-1)!);
    if (rows.length < batchRows) return after;
  }
}

const fenceAs = (account: number, state: string, until: number | null) =>
  q(
    `INSERT INTO account_fences (account_id, state, until) VALUES (?, ?, ?)
     ON CONFLICT (account_id) DO UPDATE SET state = excluded.state, until = excluded.until`,
    account,
    state,
    until,
  );

export async function moveAccount(options: MoveOptions): Promise<MoveReport> {
  const { account, to, directory, shards } = options;
  const batchRows = options.batchRows ?? 200;
  const now = options.now ?? Date.now;
  const sleep = options.sleep ?? ((ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms)));
  const log = options.log ?? (() => undefined);
  const routeWaitMs = options.routeWaitMs ?? PLACEMENT_FRESH_MS + 500;
  const pauseLimitMs = options.pauseLimitMs ?? 10_000;

  const [[placed]] = (await directory([
    q("SELECT id, name, created_at, shard FROM accounts WHERE id = ?", account),
  ])) as [Row[]];
  if (!placed) throw new MoveError(`There is no account ${account}.`);
  const from = String(placed.shard);
  const source = shards[from];
  const target = shards[to];
  if (!target) throw new MoveError(`${to} is not one of the shards (${Object.keys(shards).join(", ")}).`);
  if (!source) throw new MoveError(`The account is on ${from}, which is not one of the shards.`);

  /** The target's fence while it is not yet the account's: paused until lifted. */
  const onTarget: Batch = async (statements) =>
    (await target([fenceAs(account, "mover", null), ...statements, fenceAs(account, "paused", null)])).slice(1, -1);

  if (from === to) {
    const purged = await purgeLeftovers(options, to, batchRows, log);
    log(`The account is on ${to}.`);
    return { from, to, copied: 0, caughtUp: 0, pauseMs: 0, purged };
  }
  // Rows copied from a shard a fill has not reached yet, or onto one, would keep their old form there.
  for (const [name, shard] of [
    [from, source],
    [to, target],
  ] as const) {
    const fills = await unfinishedFills(shard);
    if (fills.length > 0) {
      throw new MoveError(
        `${name} has data fills to finish (${fills.map((fill) => fill.name).join(", ")}): run \`npm run fill\` first (docs/operations.md, "Data fills").`,
      );
    }
  }

  // 1. The target: an id range of its own above every one claimed (src/db/id-ranges.ts), the account's row,
  //    fenced, and nothing left of an interrupted earlier run.
  const range = await claimShardRange(directory, shards, to, { now: now() });
  if (to !== DIRECTORY) {
    await target([
      q(
        "INSERT INTO accounts (id, name, created_at, shard) VALUES (?, ?, ?, ?) ON CONFLICT (id) DO NOTHING",
        account,
        placed.name,
        placed.created_at,
        to,
      ),
    ]);
  }
  await onTarget([]);
  await deleteAccountRows(account, onTarget, batchRows);
  log(`Copying account ${account} from ${from} to ${to} (which allocates ids from ${range} on).`);

  // 2. Copy while serving, from a noted point of the source's change log.
  const copy: Copy = { source, write: onTarget, account, from, to, batchRows };
  const stop = () => {
    if (options.signal?.aborted) throw new MoveError("Interrupted before the switch: the account stays on its source.");
  };
  let head = await changeHead(source, account);
  let copied = 0;
  for (const { table } of OWNED) {
    await copyPages(
      source,
      batchRows,
      0,
      (after) =>
        q(
          `SELECT * FROM "${table.name}" WHERE account_id = ? AND id > ? ORDER BY id LIMIT ?`,
          account,
          after,
          batchRows,
        ),
      (row) => Number(row.id),
      async (rows) => {
        stop();
        // The account's categories are on every shard already (src/db/client.ts): brought up to date, not skipped.
        await put(copy, table, rows, { update: table === CATEGORIES });
        if (table === LISTS) await copyMemberships(copy, rows);
        copied += rows.length;
      },
    );
  }
  await copyIdempotency(copy);
  await copyWebhooks(copy);
  const outboxCopied = await copyOutbox(copy, 0);
  await copyChanges(copy);
  log(`Copied ${copied} rows; catching up from the change log.`);

  // 3. Catch up until a round finds little, then 4. pause the source's writes and take the rest.
  let caughtUp = 0;
  for (let round = 0; round < 10; round++) {
    stop();
    const { applied, head: next } = await catchUp(copy, head);
    caughtUp += applied;
    head = next;
    log(`Caught up ${applied} changes.`);
    if (applied < batchRows) break;
  }
  stop();
  const pauseStarted = now();
  let switched = false;
  try {
    await source([
      q(
        "INSERT INTO account_fences (account_id, state, until) VALUES (?, 'paused', ?) ON CONFLICT (account_id) DO UPDATE SET state = CASE WHEN state = 'gone' THEN 'gone' ELSE 'paused' END, until = excluded.until",
        account,
        pauseStarted + pauseLimitMs,
      ),
    ]);
    for (;;) {
      const { applied, head: next } = await catchUp(copy, head);
      caughtUp += applied;
      head = next;
      stop();
      // Gone, unless the pause ran out (a write may then have landed): the last catch-up then takes it.
      const [, [after]] = (await source([
        q("UPDATE account_fences SET state = 'gone', until = NULL WHERE account_id = ?", account),
        q("SELECT coalesce(max(seq), 0) AS seq FROM changes WHERE account_id = ?", account),
      ])) as [unknown, Row[]];
      if (Number(after!.seq) <= head) break;
    }
    await copyIdempotency(copy);
    await copyWebhooks(copy);
    const outboxEnd = await copyOutbox(copy, outboxCopied);
    // What the target's own triggers wrote for the copied rows: ids of its fresh range, above every copied one.
    await onTarget([q("DELETE FROM webhook_outbox WHERE account_id = ? AND id > ?", account, outboxEnd)]);
    await directory([q("UPDATE accounts SET shard = ? WHERE id = ? AND shard = ?", to, account, from)]);
    switched = true;
  } finally {
    // Interrupted or failed before the switch: the source takes the account's writes again.
    if (!switched) await source([q("DELETE FROM account_fences WHERE account_id = ?", account)]);
  }
  log(`Switched to ${to}; waiting ${routeWaitMs} ms for every isolate to route there.`);
  await sleep(routeWaitMs);
  await target([q("DELETE FROM account_fences WHERE account_id = ?", account)]);
  const pauseMs = now() - pauseStarted;
  log(`Writes paused for ${pauseMs} ms. Deleting the rows left on ${from}.`);

  // 5. Delete what the source holds, after a grace period for reads in flight there.
  await sleep(options.graceMs ?? 5000);
  const purged = await purgeLeftovers(options, to, batchRows, log);
  return { from, to, copied, caughtUp, pauseMs, purged };
}

async function changeHead(shard: Batch, account: number): Promise<number> {
  const [[row]] = (await shard([
    q("SELECT coalesce(max(seq), 0) AS seq FROM changes WHERE account_id = ?", account),
  ])) as [Row[]];
  return Number(row!.seq);
}

/**
 * The lists' memberships as the source has them, and their versions (copying memberships bumps them).
 * The lists are the account's in the target (`put` refused any collision), so their memberships there are too.
 */
async function copyMemberships(copy: Copy, lists: Row[]): Promise<void> {
  for (const list of lists) {
    await copy.write([q("DELETE FROM list_pinpoints WHERE list_id = ?", list.id)]);
    await copyPages(
      copy.source,
      copy.batchRows,
      0,
      (after) =>
        q(
          "SELECT * FROM list_pinpoints WHERE list_id = ? AND pinpoint_id > ? ORDER BY pinpoint_id LIMIT ?",
          list.id,
          after,
          copy.batchRows,
        ),
      (row) => Number(row.pinpoint_id),
      (rows) => put(copy, MEMBERSHIPS, rows),
    );
  }
  const [versions] = (await copy.source([
    q(
      `SELECT id, version FROM lists WHERE id IN (SELECT value FROM json_each(?))`,
      JSON.stringify(lists.map((l) => l.id)),
    ),
  ])) as [Row[]];
  if (versions.length > 0) {
    await copy.write(
      versions.map((v) =>
        q("UPDATE lists SET version = ? WHERE id = ? AND account_id = ?", v.version, v.id, copy.account),
      ),
    );
  }
}

/** Idempotency records are in no change log: copied whole, before and during the pause. */
async function copyIdempotency(copy: Copy): Promise<void> {
  await copyPages(
    copy.source,
    copy.batchRows,
    "",
    (after) =>
      q(
        "SELECT * FROM idempotency_keys WHERE account_id = ? AND key > ? ORDER BY key LIMIT ?",
        copy.account,
        after,
        copy.batchRows,
      ),
    (row) => String(row.key),
    (rows) => put(copy, IDEMPOTENCY, rows, { update: true }),
  );
}

/**
 * Webhooks are in no change log either: copied whole, before and during the pause, with their
 * delivery attempts (appended only, so those the target has are as the source has them), and without
 * a lease, so delivery goes on from the target at once. One the source no longer has is deleted from
 * the target, its attempts with it.
 */
async function copyWebhooks(copy: Copy): Promise<void> {
  const { source, write, account, batchRows } = copy;
  const [hooks] = (await source([q("SELECT * FROM webhooks WHERE account_id = ? ORDER BY id", account)])) as [Row[]];
  await put(copy, WEBHOOKS, hooks, {
    update: true,
    before: [
      q(
        "DELETE FROM webhooks WHERE account_id = ? AND id NOT IN (SELECT value FROM json_each(?))",
        account,
        JSON.stringify(hooks.map((hook) => hook.id)),
      ),
    ],
    // A consumer's lease on the source means nothing here: the fence stops its writes there.
    after: [q("UPDATE webhooks SET lease_until = NULL WHERE account_id = ?", account)],
  });
  for (const hook of hooks) {
    const [[last]] = (await write([
      q("SELECT coalesce(max(id), 0) AS id FROM webhook_deliveries WHERE webhook_id = ?", hook.id),
    ])) as [Row[]];
    await copyPages(
      source,
      batchRows,
      Number(last!.id),
      (after) =>
        q(
          "SELECT * FROM webhook_deliveries WHERE webhook_id = ? AND id > ? ORDER BY id LIMIT ?",
          hook.id,
          after,
          batchRows,
        ),
      (row) => Number(row.id),
      (rows) => put(copy, DELIVERIES, rows),
    );
  }
}

/**
 * The webhook outbox's rows after `after`, with their ids (webhooks' positions point at them); returns
 * the last id copied. Rows the target's triggers write while the copy catches up are deleted in the
 * pause: every write of the account happened on the source, whose rows say what to deliver.
 */
async function copyOutbox(copy: Copy, after: number): Promise<number> {
  return copyPages(
    copy.source,
    copy.batchRows,
    after,
    (from) =>
      q(
        "SELECT * FROM webhook_outbox WHERE account_id = ? AND id > ? ORDER BY id LIMIT ?",
        copy.account,
        from,
        copy.batchRows,
      ),
    (row) => Number(row.id),
    (rows) => put(copy, OUTBOX, rows),
  );
}

/**
 * The source's change-log entries, written over the target's: the target's triggers logged the copy
 * under its own (larger) numbers; the source's numbers are what followers' cursors hold.
 */
async function copyChanges(copy: Copy): Promise<void> {
  await copyPages(
    copy.source,
    copy.batchRows,
    0,
    (after) =>
      q(
        "SELECT * FROM changes WHERE account_id = ? AND seq > ? ORDER BY seq LIMIT ?",
        copy.account,
        after,
        copy.batchRows,
      ),
    (row) => Number(row.seq),
    (rows) => put(copy, CHANGES, rows, { update: true }),
  );
}

/** Applies the source's changes after `head` to the target; returns how many and the new head. */
async function catchUp(copy: Copy, head: number): Promise<{ applied: number; head: number }> {
  const { source, write, account, batchRows } = copy;
  let applied = 0;
  let after = head;
  // Up to the log's end as it is now: writers that keep writing are the next round's.
  const end = await changeHead(source, account);
  for (;;) {
    const [changes] = (await source([
      q(
        "SELECT * FROM changes WHERE account_id = ? AND seq > ? AND seq <= ? ORDER BY seq LIMIT ?",
        account,
        after,
        end,
        batchRows,
      ),
    ])) as [Row[]];
    if (changes.length === 0) return { applied, head: end };
    const ids = (type: string, op: string) =>
      changes.filter((c) => c.type === type && c.op === op).map((c) => Number(c.object_id));
    for (const { table, type } of OWNED) {
      const upserted = ids(type, "upsert");
      if (upserted.length === 0) continue;
      const [rows] = (await source([
        q(
          `SELECT * FROM "${table.name}" WHERE account_id = ? AND id IN (SELECT value FROM json_each(?))`,
          account,
          JSON.stringify(upserted),
        ),
      ])) as [Row[]];
      await put(copy, table, rows, { update: true });
      if (table === LISTS && rows.length > 0) await copyMemberships(copy, rows);
    }
    for (const { table, type } of [...OWNED].reverse()) {
      const deleted = ids(type, "delete");
      if (deleted.length === 0) continue;
      await write([
        q(
          `DELETE FROM "${table.name}" WHERE account_id = ? AND id IN (SELECT value FROM json_each(?))`,
          account,
          JSON.stringify(deleted),
        ),
      ]);
    }
    await put(copy, CHANGES, changes, { update: true });
    applied += changes.length;
    after = Number(changes.at(-1)!.seq);
  }
}

/**
 * Deletes every row of the account in `write`'s database, in batches, children first. Not its
 * categories: every shard holds every category (src/db/client.ts), which other accounts' places may use.
 */
async function deleteAccountRows(account: number, write: Batch, batchRows: number): Promise<void> {
  const chunked = (table: string) =>
    q(
      `DELETE FROM "${table}" WHERE id IN (SELECT id FROM "${table}" WHERE account_id = ? LIMIT ?)`,
      account,
      batchRows,
    );
  for (const table of ["events", "lists", "pinpoints"]) {
    for (;;) {
      const [, [left]] = (await write([
        chunked(table),
        q(`SELECT count(*) AS n FROM (SELECT 1 FROM "${table}" WHERE account_id = ? LIMIT 1)`, account),
      ])) as [unknown, Row[]];
      if (Number(left!.n) === 0) break;
    }
  }
  await write([
    q("DELETE FROM webhooks WHERE account_id = ?", account),
    q("DELETE FROM webhook_outbox WHERE account_id = ?", account),
    q("DELETE FROM idempotency_keys WHERE account_id = ?", account),
    q("DELETE FROM changes WHERE account_id = ?", account),
    q("DELETE FROM tile_cells WHERE account_id = ?", account),
  ]);
}

/** Deletes the account's rows from every shard it has left (its fence says `gone`). */
async function purgeLeftovers(
  options: MoveOptions,
  to: string,
  batchRows: number,
  log: (line: string) => void,
): Promise<boolean> {
  let purged = false;
  for (const [name, shard] of Object.entries(options.shards)) {
    if (name === to) continue;
    const [[fence]] = (await shard([q("SELECT state FROM account_fences WHERE account_id = ?", options.account)])) as [
      Row[],
    ];
    if (fence?.state !== "gone") continue;
    const asMover: Batch = async (statements) =>
      (
        await shard([fenceAs(options.account, "mover", null), ...statements, fenceAs(options.account, "gone", null)])
      ).slice(1, -1);
    // The account's row stays: its categories, on every shard, reference it.
    await deleteAccountRows(options.account, asMover, batchRows);
    log(`Deleted the account's rows from ${name}.`);
    purged = true;
  }
  return purged;
}
