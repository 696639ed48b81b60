/**
 * The migration safety check's machinery (test/migrations.test.ts): empty a
 * D1 database, give every table rows, take a census, and compare two
 * censuses. It reads the schema from the database itself, so a table added by
 * a new migration gets rows and is counted without changes here.
 */

/** Rows given to each table; three so that composite keys (list memberships) get distinct pairs. */
const ROWS = 3;

/**
 * Realistic values for columns whose content later migrations may read (JSON
 * that json_each() parses, media keys, scopes): `table.column` or `*.column`,
 * value for row n. Every other column gets a generic value of its type. A new
 * column with a CHECK constraint, or one a data migration parses, belongs here.
 */
const VALUES: Record<string, (n: number) => unknown> = {
  "*.tags": (n) => JSON.stringify([`tag-${n}`, "shared"]),
  "*.dates": (n) =>
    JSON.stringify([
      { start: `2026-0${n + 1}-01T10:00:00.000Z`, end: `2026-0${n + 1}-01T12:00:00.000Z` },
      { start: `2026-0${n + 1}-08T10:00:00.000Z`, end: `2026-0${n + 1}-08T12:00:00.000Z` },
    ]),
  "*.media_key": (n) => `m/${n.toString(16).padStart(32, "0")}.jpg`,
  "*.image_key": (n) => `m/${(n + 16).toString(16).padStart(32, "0")}.png`,
  // Text in scripts written without spaces, which migration 0012 rewrites into search forms.
  "*.description": (n) => `<p>Description <b>${n}</b> วัดพระแก้ว</p>`,
  "pinpoints.name": (n) => `東京国立博物館 ${n}`,
  "pinpoints.address": (n) => `東京都台東区上野公園 ${n}`,
  "events.name": (n) => `ရွှေတိဂုံဘုရား ${n}`,
  "*.latitude": (n) => 48.85 + n / 100,
  "*.longitude": (n) => 2.35 + n / 100,
  "*.altitude": (n) => 35 + n,
  "clients.scope": (n) => (n % 2 ? "read" : "read write"),
  "clients.secret_version": () => 1,
  "publishable_keys.origins": (n) => JSON.stringify([`https://site-${n}.example.com`, "https://*.example.org"]),
  "publishable_keys.every_list": (n) => n % 2,
  "webhooks.events": (n) => JSON.stringify(n % 2 ? ["*"] : ["pinpoint.created", "list.membership_changed"]),
  "webhooks.url": (n) => `https://hooks-${n}.example.com/poi`,
  "webhooks.secret": (n) => `whsec_${btoa(String(n).padStart(32, "0"))}`,
  "webhook_outbox.type": () => "pinpoint",
  "webhook_outbox.op": (n) => (n % 2 ? "upsert" : "delete"),
  "webhook_outbox.event": (n) => (n % 2 ? "pinpoint.updated" : "pinpoint.deleted"),
  "webhook_outbox.object": (n) => JSON.stringify({ id: n, name: `Place ${n}`, tags: "[]", version: 2 }),
};

type Column = { name: string; type: string; notnull: number; dflt_value: string | null; pk: number };
type ForeignKey = { table: string; from: string; to: string | null };

/** Tables SQLite, D1 and the migration runner own, and the shadow tables behind virtual tables. */
async function userTables(db: D1Database): Promise<{ name: string; virtual: boolean }[]> {
  const { results } = await db
    .prepare(
      `SELECT name, sql FROM sqlite_master WHERE type = 'table'
       AND name NOT LIKE 'sqlite\\_%' ESCAPE '\\' AND name NOT LIKE '\\_cf\\_%' ESCAPE '\\' AND name <> 'd1_migrations'
       ORDER BY name`,
    )
    .all<{ name: string; sql: string }>();
  const virtual = results.filter((t) => /^CREATE VIRTUAL TABLE/i.test(t.sql)).map((t) => t.name);
  return results
    .filter((t) => !virtual.some((v) => t.name.startsWith(`${v}_`)))
    .map((t) => ({ name: t.name, virtual: virtual.includes(t.name) }));
}

const quote = (name: string) => `"${name.replaceAll('"', '""')}"`;

async function columnsOf(db: D1Database, table: string): Promise<Column[]> {
  return (await db.prepare(`PRAGMA table_info(${quote(table)})`).all<Column>()).results;
}

async function foreignKeysOf(db: D1Database, table: string): Promise<ForeignKey[]> {
  return (await db.prepare(`PRAGMA foreign_key_list(${quote(table)})`).all<ForeignKey>()).results;
}

/** Drops everything, the migration log included: the database is as new. */
export async function emptyDatabase(db: D1Database): Promise<void> {
  const tables = [...(await userTables(db)).map((t) => t.name), "d1_migrations"];
  // Children before parents, so no drop trips a foreign key.
  const order: string[] = [];
  const pending = new Set(tables);
  const parents = new Map<string, string[]>();
  for (const t of tables)
    parents.set(
      t,
      (await foreignKeysOf(db, t).catch(() => [])).map((fk) => fk.table),
    );
  while (pending.size > 0) {
    const leaf = [...pending].find((t) => ![...pending].some((o) => o !== t && parents.get(o)?.includes(t)));
    const next = leaf ?? [...pending][0]!;
    order.push(next);
    pending.delete(next);
  }
  for (const t of order) await db.prepare(`DROP TABLE IF EXISTS ${quote(t)}`).run();
  const sequence = await db.prepare("SELECT 1 FROM sqlite_master WHERE name = 'sqlite_sequence'").first();
  if (sequence) await db.prepare("DELETE FROM sqlite_sequence").run();
}

function genericValue(table: string, column: Column, n: number): unknown {
  const custom = VALUES[`${table}.${column.name}`] ?? VALUES[`*.${column.name}`];
  if (custom) return custom(n);
  const type = column.type.toUpperCase();
  if (type.includes("INT")) return 1_700_000_000_000 + n;
  if (type.includes("REAL") || type.includes("FLOA") || type.includes("DOUB")) return n + 0.5;
  if (type.includes("BLOB")) return new Uint8Array([n, 1, 2, 3]);
  return `${table} ${column.name} ${n}`;
}

/**
 * Tables that triggers fill from other tables' rows (migrations/0004_query_indexes.sql,
 * 0011_tile_cells.sql): once the triggers exist, they get their rows from those, and a migration that
 * keeps the source rows keeps theirs.
 */
const DERIVED = new Set(["event_occurrences", "tile_cells"]);

/**
 * Inserts ROWS rows into every table, parents first, each row filling every
 * column except an INTEGER PRIMARY KEY (row 0 leaves nullable columns NULL, so
 * NULLs are covered too). Foreign keys point at rows of the parent. Throws,
 * naming the table, when a table cannot be given rows.
 */
export async function populate(db: D1Database): Promise<void> {
  const tables = (await userTables(db)).filter((t) => !t.virtual).map((t) => t.name);
  const keys = new Map<string, ForeignKey[]>();
  for (const t of tables) keys.set(t, await foreignKeysOf(db, t));
  const done = new Set<string>();
  while (done.size < tables.length) {
    const ready = tables.find(
      (t) =>
        !done.has(t) && keys.get(t)!.every((fk) => fk.table === t || done.has(fk.table) || !tables.includes(fk.table)),
    );
    if (!ready) throw new Error(`foreign keys form a cycle among ${tables.filter((t) => !done.has(t)).join(", ")}`);
    // A derived table that the triggers have filled already keeps just those rows.
    if (!DERIVED.has(ready) || (await countRows(db, ready)) === 0) await populateTable(db, ready, keys.get(ready)!);
    done.add(ready);
  }
}

async function populateTable(db: D1Database, table: string, foreignKeys: ForeignKey[]): Promise<void> {
  const columns = await columnsOf(db, table);
  const primaryKey = columns.filter((c) => c.pk > 0);
  const rowidAlias = primaryKey.length === 1 && primaryKey[0]!.type.toUpperCase() === "INTEGER";
  const parentValues = new Map<string, unknown[]>();
  for (const fk of foreignKeys) {
    const to = fk.to ?? (await columnsOf(db, fk.table)).find((c) => c.pk === 1)?.name ?? "rowid";
    const rows = await db
      .prepare(`SELECT ${quote(to)} AS v FROM ${quote(fk.table)} ORDER BY rowid DESC LIMIT ${ROWS}`)
      .all<{ v: unknown }>();
    parentValues.set(fk.from, rows.results.map((r) => r.v).reverse());
  }
  const before = await countRows(db, table);
  for (let n = 0; n < ROWS; n++) {
    const names: string[] = [];
    const values: unknown[] = [];
    for (const column of columns) {
      if (rowidAlias && column.pk === 1) continue;
      const parents = parentValues.get(column.name);
      const nullable = column.notnull === 0 && column.pk === 0;
      if (n === 0 && nullable) continue;
      if (parents) {
        if (parents.length === 0) {
          if (nullable) continue;
          throw new Error(`${table}.${column.name} needs a row in the table it references, which has none`);
        }
        values.push(parents[n % parents.length]);
      } else {
        values.push(genericValue(table, column, n));
      }
      names.push(quote(column.name));
    }
    const sql =
      names.length === 0
        ? `INSERT INTO ${quote(table)} DEFAULT VALUES`
        : `INSERT INTO ${quote(table)} (${names.join(", ")}) VALUES (${names.map(() => "?").join(", ")})`;
    try {
      await db
        .prepare(sql)
        .bind(...values)
        .run();
    } catch (error) {
      throw new Error(
        `could not give table ${table} a row (${String(error)}); add realistic values for its columns to VALUES in test/migration-safety.ts`,
        { cause: error },
      );
    }
  }
  if ((await countRows(db, table)) < before + ROWS) throw new Error(`table ${table} did not keep the rows inserted`);
}

async function countRows(db: D1Database, table: string): Promise<number> {
  return (await db.prepare(`SELECT count(*) AS n FROM ${quote(table)}`).first<{ n: number }>())!.n;
}

/** Row count per table, and non-NULL count per column (a rebuild that drops a column's values loses data too). */
export type Census = Map<string, { rows: number; columns: Map<string, number> }>;

export async function census(db: D1Database): Promise<Census> {
  const result: Census = new Map();
  for (const { name, virtual } of await userTables(db)) {
    const columns = new Map<string, number>();
    if (!virtual) {
      const names = (await columnsOf(db, name)).map((c) => c.name);
      const counts = await db
        .prepare(`SELECT ${names.map((c, i) => `count(${quote(c)}) AS c${i}`).join(", ")} FROM ${quote(name)}`)
        .first<Record<string, number>>();
      names.forEach((c, i) => columns.set(c, counts![`c${i}`]!));
    }
    result.set(name, { rows: await countRows(db, name), columns });
  }
  return result;
}

/** What a migration lost: a table gone, fewer rows, or fewer non-NULL values in a column it kept. */
export function losses(before: Census, after: Census): string[] {
  const found: string[] = [];
  for (const [table, was] of before) {
    const now = after.get(table);
    if (!now) {
      found.push(`table ${table} (${was.rows} rows) is gone`);
      continue;
    }
    if (now.rows < was.rows) found.push(`table ${table} lost ${was.rows - now.rows} of ${was.rows} rows`);
    for (const [column, count] of was.columns) {
      const kept = now.columns.get(column);
      if (kept !== undefined && kept < count) found.push(`${table}.${column} lost ${count - kept} of ${count} values`);
    }
  }
  return found;
}

/** `PRAGMA foreign_key_check`: rows whose reference points at no row. */
export async function foreignKeyViolations(db: D1Database): Promise<string[]> {
  const { results } = await db
    .prepare("PRAGMA foreign_key_check")
    .all<{ table: string; rowid: number; parent: string; fkid: number }>();
  return results.map((r) => `${r.table} row ${r.rowid} references a missing ${r.parent} row`);
}
