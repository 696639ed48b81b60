/**
 * What the Worker, the tests and the Node scripts agree on about shards
 * (docs/scaling.md): the configuration's shape, which tables are the
 * directory's, and the id ranges. Imports nothing, so scripts/ can use it.
 */

/** The binding of the directory database: accounts, clients, publishable keys, id ranges. */
export const DIRECTORY = "DB";

/**
 * How long an isolate routes an account by what it read of the directory
 * (src/db/shards.ts); a move keeps the account's writes paused for longer than
 * this after it switched the directory (src/db/move.ts).
 */
export const PLACEMENT_FRESH_MS = 1000;

/**
 * Ids and change-log sequence numbers are allocated in ranges of this many,
 * each range by one shard only: 2^53 / 2^36 = 131,072 ranges fit in safe integers.
 */
export const ID_RANGE = 2 ** 36;

/** The AUTOINCREMENT tables of a shard, whose `sqlite_sequence` entries say which range it allocates from. */
export const SEQUENCED_TABLES = [
  "pinpoints",
  "lists",
  "categories",
  "events",
  "changes",
  "webhooks",
  "webhook_deliveries",
  "webhook_outbox",
] as const;

const parsedShardNames = new Map<string | undefined, readonly string[]>();

/**
 * The shard bindings named by `SHARDS` (comma-separated), in order; the directory alone when empty.
 * Every request routes by them, so each configured value is parsed once.
 */
export function shardNames(value: string | undefined): readonly string[] {
  let names = parsedShardNames.get(value);
  if (!names) {
    const listed = (value ?? "")
      .split(",")
      .map((name) => name.trim())
      .filter((name) => name !== "");
    names = Object.freeze(listed.length === 0 ? [DIRECTORY] : [...new Set(listed)]);
    if (parsedShardNames.size < 16) parsedShardNames.set(value, names);
  }
  return names;
}

/** SQL: the highest number this database has allocated in any sequenced table. */
export const HIGHEST_SEQUENCE_SQL = `SELECT coalesce(max(seq), 0) AS seq FROM sqlite_sequence WHERE name IN (${SEQUENCED_TABLES.map((t) => `'${t}'`).join(", ")})`;

/**
 * SQL that makes a database allocate from `start` on, in every sequenced table:
 * AUTOINCREMENT continues above the largest of `sqlite_sequence` and the table's rows.
 */
export function claimRangeSql(start: number): string[] {
  return SEQUENCED_TABLES.flatMap((table) => [
    `UPDATE sqlite_sequence SET seq = max(seq, ${start - 1}) WHERE name = '${table}'`,
    `INSERT INTO sqlite_sequence (name, seq) SELECT '${table}', ${start - 1} WHERE NOT EXISTS (SELECT 1 FROM sqlite_sequence WHERE name = '${table}')`,
  ]);
}
