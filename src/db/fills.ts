/**
 * Data fills (the `data_fills` table of src/db/schema.ts; docs/development.md,
 * "Writing migrations"): what a migration needs computed for the rows already
 * there runs here, a batch of rows at a time in id order, each batch one
 * transaction, instead of in the migration as one statement that a large
 * database would take past D1's 30 seconds. A batch's statements and the
 * cursor that records it commit together, so a fill stopped anywhere resumes
 * where it stopped; each statement is also a no-op unless the cursor is still
 * where the batch started, so two runners never apply a batch twice.
 *
 * The scheduled job runs fills on every shard (src/index.ts); `npm run fill`
 * and `npm start` run them from Node over the same `Batch` as src/db/move.ts,
 * which is why this module imports nothing Worker-only.
 *
 * A fill's statements must leave a row as the code of the same deploy writes
 * it, whatever wrote it since the migration, and run again on the same rows
 * change nothing. They write only columns no client sees, so they write no
 * change-log entry (migrations/0019_data_fills.sql).
 */
import type { Batch, Row, Statement } from "./move.ts";
import { searchFormStatements, type IndexedText, type RowScope } from "./search/search-form-sql.ts";

type Fill = {
  /** The table whose rows the fill walks, by `id`. */
  table: string;
  /** The statements that fill the rows of `scope`, leaving alone the base rows that `exclude` selects. */
  statements: (scope: RowScope, exclude: string) => RowScope[];
};

const PINPOINT_TEXT: IndexedText = {
  table: "pinpoints",
  fts: "pinpoints_fts",
  columns: {
    name: ["name", "name_search"],
    address: ["address", "address_search"],
    tags: ["tags", "tags_search"],
    description: ["description_text"],
  },
};

const EVENT_TEXT: IndexedText = {
  table: "events",
  fts: "events_fts",
  columns: { name: ["name", "name_search"], tags: ["tags", "tags_search"], description: ["description_text"] },
};

/** Every fill this code knows, by the name its migration registered. */
export const FILLS: Record<string, Fill> = {
  // migrations/0012_search_forms.sql: search forms and both full-text indexes, for rows written before it.
  search_forms_pinpoints: {
    table: "pinpoints",
    statements: (scope, exclude) => searchFormStatements(PINPOINT_TEXT, scope, exclude),
  },
  search_forms_events: {
    table: "events",
    statements: (scope, exclude) => searchFormStatements(EVENT_TEXT, scope, exclude),
  },
};

/**
 * A batch's size: it starts at FILL_ROWS rows and is halved or doubled (up to MAX_FILL_ROWS) to take
 * about FILL_BATCH_MS, so a batch of long texts stays as short as one of short texts; a batch that
 * fails is tried again at a quarter of its size, since one that ran past D1's 30 seconds changed
 * nothing. Filling the search forms takes 0.1 to 0.4 ms a row in local SQLite (docs/operations.md,
 * "Data fills"), so the largest batch takes seconds even on a busy machine.
 */
export const FILL_ROWS = 1000;
const MAX_FILL_ROWS = 20_000;
export const FILL_BATCH_MS = 2000;
const RETRIES = 3;

/** A base row a fill must not write: one of an account that has left this shard (its writes are refused). */
const LEFT_SHARD = "`account_id` IN (SELECT `account_id` FROM `account_fences` WHERE `state` = 'gone')";

const q = (sql: string, ...params: unknown[]): Statement => ({ sql, params });

/** A fill's name as an SQL string: the names are this module's own keys. */
function nameSql(name: string): string {
  if (!/^[a-z0-9_]+$/.test(name)) throw new Error(`Not a fill name: ${name}`);
  return `'${name}'`;
}

/**
 * SQL: the id a batch of `rows` rows of `table` after `cursor` ends at (`cursor` and `last` are SQL
 * expressions): the rows-th id after the cursor, or the last one there is; null when none is left.
 */
const batchEndSql = (table: string, cursor: string, last: string, rows: number) =>
  `coalesce((SELECT \`id\` FROM ${table} WHERE \`id\` > ${cursor} AND \`id\` <= ${last} ORDER BY \`id\` LIMIT 1 OFFSET ${rows - 1}), (SELECT max(\`id\`) FROM ${table} WHERE \`id\` > ${cursor} AND \`id\` <= ${last}))`;

export type FillState = { name: string; cursor: number; last: number | null };
export type FillProgress = { name: string; rows: number; cursor: number; last: number; done: boolean };

/** The fills not done yet, in name order. */
export async function unfinishedFills(batch: Batch): Promise<FillState[]> {
  const [rows] = (await batch([
    q("SELECT name, cursor, last FROM data_fills WHERE done_at IS NULL ORDER BY name"),
  ])) as [Row[]];
  return rows.map((row) => ({
    name: String(row.name),
    cursor: Number(row.cursor),
    last: row.last === null ? null : Number(row.last),
  }));
}

/**
 * The next batch of fill `name`: at most `rows` rows after its cursor, and the cursor moved past them,
 * in one transaction that reads the cursor itself, so batches sent at the same time by two runners
 * (the scheduled job and `npm run fill`) take consecutive ranges. The first batch fixes where the fill
 * ends: the highest id then; rows written from then on are this code's.
 */
export async function fillStep(
  batch: Batch,
  name: string,
  options: { rows?: number; now?: number } = {},
): Promise<FillProgress> {
  const fill = FILLS[name];
  if (!fill) throw new Error(`This code does not know the fill ${name}.`);
  const rows = Math.max(1, Math.trunc(options.rows ?? FILL_ROWS));
  const table = `\`${fill.table}\``;
  const self = nameSql(name);
  const cursor = `(SELECT \`cursor\` FROM \`data_fills\` WHERE \`name\` = ${self})`;
  const last = `(SELECT \`last\` FROM \`data_fills\` WHERE \`name\` = ${self})`;
  const scope: RowScope = {
    sql: `\`id\` > ${cursor} AND \`id\` <= ${batchEndSql(table, cursor, last, rows)}`,
    params: [],
  };
  const end = batchEndSql(table, "`data_fills`.`cursor`", "`data_fills`.`last`", rows);
  const results = await batch([
    q(`UPDATE data_fills SET last = (SELECT coalesce(max(id), 0) FROM ${table}) WHERE name = ${self} AND last IS NULL`),
    q(`SELECT count(*) AS n FROM ${table} WHERE ${scope.sql}`),
    ...fill.statements(scope, LEFT_SHARD),
    q(
      `UPDATE data_fills SET cursor = coalesce(${end}, last), done_at = CASE WHEN coalesce(${end}, last) >= last THEN ? END WHERE name = ${self}`,
      options.now ?? Date.now(),
    ),
    q(`SELECT cursor, last, done_at FROM data_fills WHERE name = ${self}`),
  ]);
  const [counted] = results[1]!;
  const state = results.at(-1)![0]!;
  return {
    name,
    rows: Number(counted!.n),
    cursor: Number(state.cursor),
    last: Number(state.last),
    done: state.done_at !== null,
  };
}

export type FillRun = {
  batches: number;
  rows: number;
  finished: string[];
  pending: string[];
  /** The fill that stopped on an error, and the error: it runs again next time. */
  failed?: { name: string; error: string };
};

/**
 * Runs the fills this code knows, batch after batch, until each is done, `deadline` (epoch ms) has
 * passed or `maxBatches` were sent (a Worker invocation may send D1 at most 1,000 queries); says what it
 * did and which fills are still pending, unknown ones included (a later deploy runs them).
 */
export async function runFills(
  batch: Batch,
  options: {
    rows?: number;
    batchMs?: number;
    deadline?: number;
    maxBatches?: number;
    now?: () => number;
    log?: (progress: FillProgress & { ms: number }) => void;
  } = {},
): Promise<FillRun> {
  const now = options.now ?? Date.now;
  const target = options.batchMs ?? FILL_BATCH_MS;
  let rows = options.rows ?? FILL_ROWS;
  const run: FillRun = { batches: 0, rows: 0, finished: [], pending: [] };
  const more = () =>
    (options.deadline === undefined || now() < options.deadline) &&
    (options.maxBatches === undefined || run.batches < options.maxBatches);
  for (const { name } of await unfinishedFills(batch)) {
    let done = false;
    let failures = 0;
    while (FILLS[name] && !run.failed && !done && more()) {
      const started = now();
      try {
        const progress = await fillStep(batch, name, { rows, now: started });
        const ms = now() - started;
        run.batches++;
        run.rows += progress.rows;
        options.log?.({ ...progress, ms });
        done = progress.done;
        failures = 0;
        if (options.rows === undefined) {
          if (ms > 2 * target) rows = Math.max(1, Math.floor(rows / 2));
          else if (ms < target / 2 && progress.rows === rows) rows = Math.min(MAX_FILL_ROWS, rows * 2);
        }
      } catch (error) {
        run.batches++;
        if (++failures > RETRIES || rows === 1) {
          run.failed = { name, error: error instanceof Error ? error.message : String(error) };
        } else rows = Math.max(1, Math.floor(rows / 4));
      }
    }
    (done ? run.finished : run.pending).push(name);
  }
  return run;
}

/** What a `Batch` needs of a D1 binding: a Worker's, or one getPlatformProxy gives a Node script. */
type D1Binding = {
  prepare(sql: string): { bind(...values: unknown[]): unknown };
  batch(statements: unknown[]): Promise<{ results: unknown[] }[]>;
};

/** A `Batch` on a D1 binding: the statements as one `batch()`, one transaction. */
export const batchOn =
  (d1: D1Binding): Batch =>
  async (statements) =>
    (await d1.batch(statements.map(({ sql, params }) => d1.prepare(sql).bind(...params)))).map(
      (result) => result.results as Row[],
    );
