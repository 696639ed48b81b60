/**
 * Bytes per pinpoint with every index (docs/scaling.md, "Scale on paper"):
 * the migrations applied to a fresh SQLite file (node:sqlite, the engine D1
 * runs), the scale group's places seeded (bench/scale-data.ts: names, tags, a
 * sentence of description, a tenth as many events), then the file's size
 * divided by the places.
 *
 *   npx node bench/shard-size.ts [PLACES]      # default 1,000,000
 */
import { mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { DatabaseSync } from "node:sqlite";
import { seedScale } from "./scale-data.ts";
import type { D1 } from "./seed.ts";

const places = Number(process.argv[2] ?? 1_000_000);
const dir = mkdtempSync(join(tmpdir(), "shard-size-"));
const file = join(dir, "shard.sqlite");
const sqlite = new DatabaseSync(file);
sqlite.exec("PRAGMA foreign_keys = ON");

/** D1's surface over node:sqlite, as much of it as the seeder uses. */
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
const started = performance.now();
await seedScale(db, places, (rows) => process.stderr.write(`\r${rows} places`));
sqlite.exec("VACUUM");
const pages = sqlite.prepare("PRAGMA page_count").get() as { page_count: number };
const size = sqlite.prepare("PRAGMA page_size").get() as { page_size: number };
const bytes = pages.page_count * size.page_size;
sqlite.close();
rmSync(dir, { recursive: true });
const perPlace = bytes / places;
const shardLimit = 10 * 1000 ** 3;
console.log(
  JSON.stringify({
    places,
    events: places / 10,
    bytes,
    bytesPerPlace: Math.round(perPlace),
    placesPer10GB: Math.floor(shardLimit / perPlace),
    shardsFor100Million: Math.ceil((1e8 * perPlace) / shardLimit),
    shardsFor1Billion: Math.ceil((1e9 * perPlace) / shardLimit),
    seconds: Math.round((performance.now() - started) / 1000),
  }),
);
