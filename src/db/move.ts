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
 * Every write of the move on a fenced account runs as the `mover` (the fence
 * triggers of migration 0014 let it through): its batch lifts the fence to
 * `mover` first and puts it back last, inside one transaction.
 */
import { unfinishedFills } from "./fills.ts";
import { claimRangeSql, DIRECTORY, freshRangeStart, HIGHEST_SEQUENCE_SQL, PLACEMENT_FRESH_MS } from "./shard-plan.ts";

export type Row = Record<string, unknown>;
export type Statement = { sql: string; params: unknown[] };
/** Runs the statements as one transaction and returns each one's rows. */
export type Batch = (statements: Statement[]) => Promise<Row[][]>;

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

/** The account's tables, in the order their rows can be inserted (foreign keys), with their keys. */
const OWNED = [
  { table: "categories", key: ["id"] },
  { table: "pinpoints", key: ["id"] },
  { table: "lists", key: ["id"] },
  { table: "events", key: ["id"] },
] as const;
type Owned = (typeof OWNED)[number]["table"];
const TYPE_TABLE: Record<string, Owned> = {
  category: "categories",
  pinpoint: "pinpoints",
  list: "lists",
  event: "events",
};

/**
 * Writes `row` as the source has it: an update if the target has the row, else an insert. Not an
 * UPSERT: its conflict clause would override the `INSERT OR REPLACE` of the change-log triggers it
 * fires (SQLite applies the outer statement's conflict policy inside triggers); not REPLACE either,
 * which deletes first and cascades.
 */
function upsert(table: string, key: readonly string[], row: Row): Statement[] {
  const columns = Object.keys(row);
  const values = columns.map((c) => row[c]);
  const keyValues = key.map((c) => row[c]);
  const match = key.map((c) => `"${c}" = ?`).join(" AND ");
  const updates = columns.filter((c) => !key.includes(c));
  return [
    ...(updates.length > 0
      ? [
          q(
            `UPDATE "${table}" SET ${updates.map((c) => `"${c}" = ?`).join(", ")} WHERE ${match}`,
            ...updates.map((c) => row[c]),
            ...keyValues,
          ),
        ]
      : []),
    q(
      `INSERT INTO "${table}" (${columns.map((c) => `"${c}"`).join(", ")}) SELECT ${columns.map(() => "?").join(", ")}
       WHERE NOT EXISTS (SELECT 1 FROM "${table}" WHERE ${match})`,
      ...values,
      ...keyValues,
    ),
  ];
}

/**
 * Inserts `rows` the target does not have yet, in one statement: the rows travel as one JSON
 * parameter (a D1 statement takes at most 100 parameters), for the bulk copy.
 */
function insertMissing(table: string, key: readonly string[], rows: Row[]): Statement {
  const columns = Object.keys(rows[0]!);
  const field = (c: string) => `j.value ->> '$.${c}'`;
  return q(
    `INSERT INTO "${table}" (${columns.map((c) => `"${c}"`).join(", ")})
     SELECT ${columns.map(field).join(", ")} FROM json_each(?) AS j
     WHERE NOT EXISTS (SELECT 1 FROM "${table}" WHERE ${key.map((c) => `"${c}" = ${field(c)}`).join(" AND ")})
     ORDER BY j.key`,
    JSON.stringify(rows),
  );
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

  // 1. The target: a fresh id range above everything any shard allocated, the account's row, fenced, and
  //    nothing left of an interrupted earlier run.
  let highest = 0;
  for (const shard of Object.values(shards)) {
    const [[row]] = (await shard([q(HIGHEST_SEQUENCE_SQL)])) as [Row[]];
    highest = Math.max(highest, Number(row?.seq ?? 0));
  }
  await target(claimRangeSql(freshRangeStart(highest)).map((sql) => q(sql)));
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
  log(`Copying account ${account} from ${from} to ${to}.`);

  // 2. Copy while serving, from a noted point of the source's change log.
  const stop = () => {
    if (options.signal?.aborted) throw new MoveError("Interrupted before the switch: the account stays on its source.");
  };
  let head = await changeHead(source, account);
  let copied = 0;
  for (const { table, key } of OWNED) {
    await copyPages(
      source,
      batchRows,
      0,
      (after) =>
        q(`SELECT * FROM "${table}" WHERE account_id = ? AND id > ? ORDER BY id LIMIT ?`, account, after, batchRows),
      (row) => Number(row.id),
      async (rows) => {
        stop();
        await onTarget([insertMissing(table, key, rows)]);
        if (table === "lists") await copyMemberships(source, onTarget, rows, batchRows);
        copied += rows.length;
      },
    );
  }
  await copyIdempotency(source, onTarget, account, batchRows);
  await copyWebhooks(source, onTarget, account, batchRows);
  const outboxCopied = await copyOutbox(source, onTarget, account, 0, batchRows);
  await copyChanges(source, onTarget, account, 0, batchRows);
  log(`Copied ${copied} rows; catching up from the change log.`);

  // 3. Catch up until a round finds little, then 4. pause the source's writes and take the rest.
  let caughtUp = 0;
  for (let round = 0; round < 10; round++) {
    stop();
    const { applied, head: next } = await catchUp(source, onTarget, account, head, batchRows);
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
      const { applied, head: next } = await catchUp(source, onTarget, account, head, batchRows);
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
    await copyIdempotency(source, onTarget, account, batchRows);
    await copyWebhooks(source, onTarget, account, batchRows);
    const outboxEnd = await copyOutbox(source, onTarget, account, outboxCopied, batchRows);
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

/** The lists' memberships as the source has them, and their versions (copying memberships bumps them). */
async function copyMemberships(source: Batch, write: Batch, lists: Row[], batchRows: number): Promise<void> {
  for (const list of lists) {
    await write([q("DELETE FROM list_pinpoints WHERE list_id = ?", list.id)]);
    await copyPages(
      source,
      batchRows,
      0,
      (after) =>
        q(
          "SELECT * FROM list_pinpoints WHERE list_id = ? AND pinpoint_id > ? ORDER BY pinpoint_id LIMIT ?",
          list.id,
          after,
          batchRows,
        ),
      (row) => Number(row.pinpoint_id),
      (rows) => write([insertMissing("list_pinpoints", ["list_id", "pinpoint_id"], rows)]),
    );
  }
  const [versions] = (await source([
    q(
      `SELECT id, version FROM lists WHERE id IN (SELECT value FROM json_each(?))`,
      JSON.stringify(lists.map((l) => l.id)),
    ),
  ])) as [Row[]];
  if (versions.length > 0) {
    await write(versions.map((v) => q("UPDATE lists SET version = ? WHERE id = ?", v.version, v.id)));
  }
}

/** Idempotency records are in no change log: copied whole, before and during the pause. */
async function copyIdempotency(source: Batch, write: Batch, account: number, batchRows: number): Promise<void> {
  await copyPages(
    source,
    batchRows,
    "",
    (after) =>
      q(
        "SELECT * FROM idempotency_keys WHERE account_id = ? AND key > ? ORDER BY key LIMIT ?",
        account,
        after,
        batchRows,
      ),
    (row) => String(row.key),
    (rows) => write(rows.flatMap((row) => upsert("idempotency_keys", ["account_id", "key"], row))),
  );
}

/**
 * Webhooks are in no change log either: copied whole, before and during the pause, with their
 * delivery attempts (appended only, so those the target has are as the source has them), and without
 * a lease, so delivery goes on from the target at once. One the source no longer has is deleted from
 * the target, its attempts with it.
 */
async function copyWebhooks(source: Batch, write: Batch, account: number, batchRows: number): Promise<void> {
  const [hooks] = (await source([q("SELECT * FROM webhooks WHERE account_id = ? ORDER BY id", account)])) as [Row[]];
  await write([
    q(
      "DELETE FROM webhooks WHERE account_id = ? AND id NOT IN (SELECT value FROM json_each(?))",
      account,
      JSON.stringify(hooks.map((hook) => hook.id)),
    ),
    ...hooks.flatMap((hook) => upsert("webhooks", ["id"], hook)),
    // A consumer's lease on the source means nothing here: the fence stops its writes there.
    q("UPDATE webhooks SET lease_until = NULL WHERE account_id = ?", account),
  ]);
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
      (rows) => write([insertMissing("webhook_deliveries", ["id"], rows)]),
    );
  }
}

/**
 * The webhook outbox's rows after `after`, with their ids (webhooks' positions point at them); returns
 * the last id copied. Rows the target's triggers write while the copy catches up are deleted in the
 * pause: every write of the account happened on the source, whose rows say what to deliver.
 */
async function copyOutbox(
  source: Batch,
  write: Batch,
  account: number,
  after: number,
  batchRows: number,
): Promise<number> {
  return copyPages(
    source,
    batchRows,
    after,
    (from) =>
      q("SELECT * FROM webhook_outbox WHERE account_id = ? AND id > ? ORDER BY id LIMIT ?", account, from, batchRows),
    (row) => Number(row.id),
    (rows) => write([insertMissing("webhook_outbox", ["id"], rows)]),
  );
}

/**
 * The source's change-log entries after `from`, written over the target's: the target's triggers logged
 * the copy under its own (larger) numbers; the source's numbers are what followers' cursors hold.
 */
async function copyChanges(source: Batch, write: Batch, account: number, from: number, batchRows: number) {
  await copyPages(
    source,
    batchRows,
    from,
    (after) =>
      q("SELECT * FROM changes WHERE account_id = ? AND seq > ? ORDER BY seq LIMIT ?", account, after, batchRows),
    (row) => Number(row.seq),
    (rows) => write(rows.flatMap((row) => upsert("changes", ["type", "object_id"], row))),
  );
}

/** Applies the source's changes after `head` to the target; returns how many and the new head. */
async function catchUp(
  source: Batch,
  write: Batch,
  account: number,
  head: number,
  batchRows: number,
): Promise<{ applied: number; head: number }> {
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
    for (const { table, key } of OWNED) {
      const type = Object.keys(TYPE_TABLE).find((t) => TYPE_TABLE[t] === table)!;
      const upserted = ids(type, "upsert");
      if (upserted.length === 0) continue;
      const [rows] = (await source([
        q(`SELECT * FROM "${table}" WHERE id IN (SELECT value FROM json_each(?))`, JSON.stringify(upserted)),
      ])) as [Row[]];
      if (rows.length > 0) await write(rows.flatMap((row) => upsert(table, key, row)));
      if (table === "lists" && rows.length > 0) await copyMemberships(source, write, rows, batchRows);
    }
    for (const { table } of [...OWNED].reverse()) {
      const type = Object.keys(TYPE_TABLE).find((t) => TYPE_TABLE[t] === table)!;
      const deleted = ids(type, "delete");
      if (deleted.length === 0) continue;
      await write([
        q(
          `DELETE FROM "${table}" WHERE account_id = ? AND id IN (SELECT value FROM json_each(?))`,
          account,
          JSON.stringify(deleted),
        ),
      ]);
    }
    await write(changes.flatMap((row) => upsert("changes", ["type", "object_id"], row)));
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
