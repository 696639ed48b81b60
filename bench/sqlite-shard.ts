/**
 * A shard as a plain SQLite file (node:sqlite, the engine D1 runs), every
 * migration applied, for the benchmarks that seed a million places without
 * a Worker (bench/shard-size.ts, bench/fill.ts): the file, the database, and
 * as much of D1's surface over it as the seeder uses.
 */
import { mkdtempSync, readdirSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { DatabaseSync } from "node:sqlite";
import type { D1 } from "./seed.ts";

export function sqliteShard(name: string): { dir: string; file: string; sqlite: DatabaseSync; db: D1 } {
  const dir = mkdtempSync(join(tmpdir(), `${name}-`));
  const file = join(dir, "shard.sqlite");
  const sqlite = new DatabaseSync(file);
  sqlite.exec("PRAGMA foreign_keys = ON");

  function statement(sql: string, values: unknown[] = []) {
    const run = () => sqlite.prepare(sql).run(...(values as never[]));
    return {
      bind: (...next: unknown[]) => statement(sql, next),
      run: async () => ({ meta: { changes: Number(run().changes) } }),
      first: async <T>() => (sqlite.prepare(sql).get(...(values as never[])) ?? null) as T | null,
      all: async <T>() => ({ results: sqlite.prepare(sql).all(...(values as never[])) as T[] }),
    };
  }
  const db = { prepare: (sql: string) => statement(sql), batch: async () => [] } as unknown as D1;

  for (const migration of readdirSync("migrations")
    .filter((name) => name.endsWith(".sql"))
    .sort()) {
    for (const part of readFileSync(join("migrations", migration), "utf8").split("--> statement-breakpoint")) {
      if (part.trim()) sqlite.exec(part);
    }
  }
  return { dir, file, sqlite, db };
}
