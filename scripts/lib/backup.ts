/**
 * A logical backup of the base tables, from which a new database is rebuilt,
 * search indexes included. `wrangler d1 export` refuses a database holding
 * virtual tables (our R*Tree and FTS5 indexes; workers-sdk #9519), so this
 * reads every base table through an `Execute` (`wrangler d1 execute`, or D1
 * itself in the tests) and writes plain SQL INSERT statements, one per line,
 * parents before children.
 *
 * Not in the backup: virtual tables and their shadow tables, tables filled
 * by triggers (`event_occurrences`, `tile_cells`), the migration log and the rows the
 * migrations seed (category 1). Restoring = applying the migrations to an
 * empty database, then running the file: the triggers index every row as it
 * is inserted, exactly as when the API writes it.
 */
import type { Execute, Row } from "./registry.ts";

/** Tables that triggers fill from the base rows (migrations/0004_query_indexes.sql, 0011_tile_cells.sql). */
const DERIVED = new Set(["event_occurrences", "tile_cells"]);
/** Rows the migrations create themselves, so a restore must not insert them again. */
const SEEDED: Record<string, string> = { categories: "account_id IS NOT NULL" };
/**
 * The change log (migrations/0006_change_log.sql): its triggers log every restored content row
 * again, so it is restored last, each row replacing what the triggers wrote for its object and
 * sequence number. The log then is exactly the backed-up one, tombstones included, and new
 * changes are numbered above every cursor issued before the backup.
 */
const LOGS = new Set(["changes"]);
/** Restoring a list's members bumps its version (a trigger); the versions are set back before the log. */
const MEMBERSHIP_VERSIONED = "lists";
const CHUNK = 2000;

const quote = (name: string) => `"${name.replaceAll('"', '""')}"`;

/** A value as an SQL literal that survives a line-based split: newlines and NULs are written as char(). */
export function literal(value: unknown): string {
  if (value === null || value === undefined) return "NULL";
  if (typeof value === "number") {
    if (!Number.isFinite(value)) throw new Error(`cannot back up the number ${value}`);
    // Integers as written; reals with 17 significant digits, which SQLite reads back to the same double.
    return Number.isInteger(value) ? String(value) : value.toPrecision(17);
  }
  if (typeof value === "bigint") return String(value);
  if (typeof value === "boolean") return value ? "1" : "0";
  const text = `'${String(value).replaceAll("'", "''")}'`;
  return text.replace(/[\0\n\r]/g, (c) => `' || char(${c.charCodeAt(0)}) || '`);
}

/** The base tables, parents before children (by their foreign keys). */
export async function baseTables(execute: Execute): Promise<string[]> {
  const [all = []] = await execute([
    "SELECT name, sql FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' AND name NOT LIKE '_cf_%' AND name <> 'd1_migrations'",
  ]);
  const virtual = all.filter((t) => /^CREATE VIRTUAL TABLE/i.test(String(t.sql))).map((t) => String(t.name));
  const tables = all
    .map((t) => String(t.name))
    .filter((name) => !virtual.some((v) => name === v || name.startsWith(`${v}_`)) && !DERIVED.has(name));
  const parents = new Map<string, string[]>();
  const lists = await execute(tables.map((t) => `PRAGMA foreign_key_list(${quote(t)})`));
  tables.forEach((t, i) =>
    parents.set(
      t,
      (lists[i] ?? []).map((r) => String(r.table)).filter((p) => p !== t),
    ),
  );
  const ordered: string[] = [];
  while (ordered.length < tables.length) {
    const next = tables.find(
      (t) => !ordered.includes(t) && parents.get(t)!.every((p) => ordered.includes(p) || !tables.includes(p)),
    );
    if (!next) throw new Error("the tables' foreign keys form a cycle");
    ordered.push(next);
  }
  return [...ordered.filter((t) => !LOGS.has(t)), ...ordered.filter((t) => LOGS.has(t))];
}

/** Writes the backup line by line; returns the number of rows per table. */
export async function exportBaseTables(
  execute: Execute,
  write: (line: string) => void | Promise<void>,
): Promise<Record<string, number>> {
  const counts: Record<string, number> = {};
  await write(`-- POI content API backup of the base tables, ${new Date().toISOString()}.`);
  await write("-- Restore into a database with every migration applied: npm run backup -- restore FILE");
  for (const table of await baseTables(execute)) {
    if (LOGS.has(table)) await writeVersions(execute, write);
    const where = SEEDED[table] ? ` AND (${SEEDED[table]})` : "";
    counts[table] = 0;
    let after: unknown = null;
    for (;;) {
      const from = after === null ? "1" : `rowid > ${literal(after)}`;
      const [rows = []] = await execute([
        `SELECT rowid AS "__rowid", * FROM ${quote(table)} WHERE ${from}${where} ORDER BY rowid LIMIT ${CHUNK}`,
      ]);
      for (const row of rows) await write(insert(table, row));
      counts[table] += rows.length;
      if (rows.length < CHUNK) break;
      after = rows[rows.length - 1]!.__rowid;
    }
  }
  return counts;
}

async function writeVersions(execute: Execute, write: (line: string) => void | Promise<void>): Promise<void> {
  let after = 0;
  for (;;) {
    const [rows = []] = await execute([
      `SELECT id, version FROM ${quote(MEMBERSHIP_VERSIONED)} WHERE id > ${after} ORDER BY id LIMIT ${CHUNK}`,
    ]);
    for (const { id, version } of rows) {
      await write(
        `UPDATE ${quote(MEMBERSHIP_VERSIONED)} SET "version" = ${literal(version)} WHERE "id" = ${literal(id)};`,
      );
    }
    if (rows.length < CHUNK) break;
    after = Number(rows[rows.length - 1]!.id);
  }
}

function insert(table: string, { __rowid: _, ...row }: Row): string {
  const names = Object.keys(row);
  return `INSERT ${LOGS.has(table) ? "OR REPLACE " : ""}INTO ${quote(table)} (${names.map(quote).join(", ")}) VALUES (${names.map((n) => literal(row[n])).join(", ")});`;
}

/** The statements of a backup file: one per line, comments skipped. */
export const backupStatements = (text: string): string[] =>
  text.split("\n").filter((line) => line.trim() !== "" && !line.startsWith("--"));
