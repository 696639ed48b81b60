/**
 * Id ranges (docs/scaling.md, "Identifiers"): every shard allocates its ids and
 * change-log numbers from ranges of ID_RANGE numbers no other shard uses, and
 * when there are several shards, category ids come from ranges of their own,
 * counted in the directory. Each range handed out is a row of the directory's
 * `id_ranges`, claimed by one statement, so two claims never get the same range,
 * even when they race. Written against `Batch`, one transaction of statements,
 * so the Worker, the tests and the Node scripts (through `wrangler d1 execute`)
 * claim with the same code. Imports nothing Worker-only.
 */
import { claimRangeSql, HIGHEST_SEQUENCE_SQL, ID_RANGE } from "./shard-plan.ts";

export type Row = Record<string, unknown>;
export type Statement = { sql: string; params: unknown[] };
/** Runs the statements as one transaction and returns each one's rows. */
export type Batch = (statements: Statement[]) => Promise<Row[][]>;

/** The holder of the ranges category ids come from: no binding is named so (a binding name has no space). */
export const CATEGORY_IDS = "category ids";

/** The last range that ends within JavaScript's safe integers. */
const LAST_START = 2 ** 53 - ID_RANGE;

/**
 * The start of the range above the one a database allocates from next, given its highest
 * `sqlite_sequence`: its next id is `sequence + 1`, so a database that claimed range k and has
 * allocated nothing from it (sequence k·ID_RANGE − 1) is in range k, not k − 1.
 */
export function rangeAbove(sequence: number): number {
  return (Math.floor((sequence + 1) / ID_RANGE) + 1) * ID_RANGE;
}

/**
 * The claim, one statement: the range above every one recorded and at least `floor` (never range 0,
 * the directory's). Parameters: holder, time, 1 for a counter that starts at the range's first id
 * (the directory's category ids) else 0, and the floor.
 */
const CLAIM_SQL = `INSERT INTO id_ranges (start, holder, claimed_at, next_id)
  SELECT start, ?, ?, CASE WHEN ? = 1 THEN start END
  FROM (SELECT max(cast(? AS INTEGER), coalesce((SELECT max(start) FROM id_ranges), 0) + ${ID_RANGE}) AS start)
  WHERE start <= ${LAST_START}
  RETURNING start`;

/**
 * The lowest start a new range may have: above what any of `databases` (every database that allocates
 * ids, every shard) allocates from, so that ranges claimed before claims were recorded (their shards'
 * sequences say where) are never handed out again.
 */
export async function rangeFloor(databases: readonly Batch[]): Promise<number> {
  let floor = ID_RANGE;
  for (const database of databases) {
    const [[row]] = (await database([{ sql: HIGHEST_SEQUENCE_SQL, params: [] }])) as [Row[]];
    floor = Math.max(floor, rangeAbove(Number(row?.seq ?? 0)));
  }
  return floor;
}

/** Claims a new range for `holder`, at `floor` or above (see `rangeFloor`), and returns its start. */
export async function claimIdRange(
  directory: Batch,
  floor: number,
  holder: string,
  options: { counter?: boolean; now?: number } = {},
): Promise<number> {
  const [[claimed]] = (await directory([
    { sql: CLAIM_SQL, params: [holder, options.now ?? Date.now(), options.counter ? 1 : 0, floor] },
  ])) as [Row[]];
  if (!claimed) throw new Error(`No id range is left to claim for ${holder}: ids would pass 2^53.`);
  return Number(claimed.start);
}

/**
 * Claims a new range for the shard `name` of `shards` and makes it allocate from there on, in every
 * sequenced table; returns the range's start. `floor`: `rangeFloor` of every shard, if the caller read it.
 */
export async function claimShardRange(
  directory: Batch,
  shards: Readonly<Record<string, Batch>>,
  name: string,
  options: { floor?: number; now?: number } = {},
): Promise<number> {
  const shard = shards[name];
  if (!shard) throw new Error(`${name} is not one of the shards (${Object.keys(shards).join(", ")}).`);
  const floor = options.floor ?? (await rangeFloor(Object.values(shards)));
  const start = await claimIdRange(directory, floor, name, { now: options.now });
  await shard(claimRangeSql(start).map((sql) => ({ sql, params: [] })));
  return start;
}

/** SQL: the start of the highest range the directory records for each holder. */
export const RECORDED_RANGES_SQL = "SELECT holder, max(start) AS start FROM id_ranges GROUP BY holder";

/**
 * The next category id of the directory's counter, one statement: no row when the counter has no
 * range yet or has used its range up.
 */
const NEXT_CATEGORY_ID_SQL = `UPDATE id_ranges SET next_id = next_id + 1
  WHERE start = (SELECT max(start) FROM id_ranges WHERE holder = '${CATEGORY_IDS}') AND next_id < start + ${ID_RANGE}
  RETURNING next_id - 1 AS id`;

/**
 * A new category id from the directory's counter, claiming its range first when it has none (or has
 * used it up): with several shards a category is created on one and copied to all, so its id must be
 * one no shard hands out.
 */
export async function nextCategoryId(directory: Batch, shards: readonly Batch[]): Promise<number> {
  for (let attempt = 0; attempt < 2; attempt++) {
    const [[row]] = (await directory([{ sql: NEXT_CATEGORY_ID_SQL, params: [] }])) as [Row[]];
    if (row) return Number(row.id);
    await claimIdRange(directory, await rangeFloor(shards), CATEGORY_IDS, { counter: true });
  }
  throw new Error("The directory's counter of category ids has no range, even after claiming one.");
}
