/**
 * What the data fill of migration 0012 costs (docs/operations.md, "Data
 * fills"): the migrations applied to a fresh SQLite file (node:sqlite, the
 * engine D1 runs), the scale group's places seeded (bench/scale-data.ts, as
 * bench/shard-size.ts sizes a shard), a share of them given names, addresses
 * and descriptions in Japanese, then the database put back as migration 0012
 * leaves one it finds populated (no search forms, both full-text indexes
 * empty, the fills registered) and the fills run to the end by src/db/fills.ts
 * in its adaptive batches, each one transaction. Prints the time, the rows a
 * second, the batches, and the time a 10 GB shard of such places would take.
 *
 *   npx node bench/fill.ts [PLACES] [SHARE]     # default 1,000,000 places, 10% in Japanese
 */
import { rmSync } from "node:fs";
import { loadavg } from "node:os";
import { runFills, type FillProgress } from "../src/db/fills.ts";
import type { Batch, Row } from "../src/db/move.ts";
import { seedScale } from "./scale-data.ts";
import { sqliteShard } from "./sqlite-shard.ts";

const places = Number(process.argv[2] ?? 1_000_000);
const share = Number(process.argv[3] ?? 0.1);
const { dir, sqlite, db } = sqliteShard("fill");

/** A `Batch` as D1 runs one: every statement in one transaction. */
const batch: Batch = async (statements) => {
  sqlite.exec("BEGIN");
  try {
    const results = statements.map(({ sql, params }) => {
      const prepared = sqlite.prepare(sql);
      if (prepared.columns().length === 0) {
        prepared.run(...(params as never[]));
        return [];
      }
      return prepared.all(...(params as never[])) as Row[];
    });
    sqlite.exec("COMMIT");
    return results;
  } catch (error) {
    sqlite.exec("ROLLBACK");
    throw error;
  }
};

const seeding = performance.now();
await seedScale(db, places, (rows) => process.stderr.write(`\r${rows} places`));
const every = Math.round(1 / share);
const description = "日本で最も古い博物館。国宝と重要文化財を多数所蔵し、庭園も美しい。";
sqlite.exec(`UPDATE pinpoints SET name = '東京国立博物館 第' || id || '号館', address = '東京都台東区上野公園' || (id % 97) || '-9',
  description = '<p>${description}' || id || '</p>', description_text = '${description}' || id WHERE id % ${every} = 0`);
// As migration 0012 leaves a populated database: no forms, the indexes created anew, the fills registered.
sqlite.exec(`UPDATE pinpoints SET name_search = NULL, address_search = NULL, tags_search = NULL;
  UPDATE events SET name_search = NULL, tags_search = NULL;
  INSERT INTO pinpoints_fts (pinpoints_fts) VALUES ('delete-all');
  INSERT INTO events_fts (events_fts) VALUES ('delete-all');
  INSERT INTO data_fills (name, blocks) VALUES ('search_forms_pinpoints', 'text_search'), ('search_forms_events', 'text_search');`);
process.stderr.write(`\rseeded ${places} places in ${((performance.now() - seeding) / 1000).toFixed(0)} s\n`);

const load = loadavg()[0]!;
const batches: (FillProgress & { ms: number })[] = [];
const started = performance.now();
const run = await runFills(batch, {
  log: (progress) => {
    batches.push(progress);
    if (batches.length % 50 === 0) process.stderr.write(`\r${progress.name} at ${progress.cursor}`);
  },
});
const seconds = (performance.now() - started) / 1000;
const filled = sqlite.prepare("SELECT count(*) AS n FROM pinpoints WHERE name_search IS NOT NULL").get() as {
  n: number;
};
// The shard's size with both indexes full again: what sizes a 10 GB shard (as bench/shard-size.ts does).
sqlite.exec("VACUUM");
const pages = sqlite.prepare("PRAGMA page_count").get() as { page_count: number };
const size = sqlite.prepare("PRAGMA page_size").get() as { page_size: number };
const bytesPerPlace = (pages.page_count * size.page_size) / places;
sqlite.close();
rmSync(dir, { recursive: true });

const sorted = batches.map((b) => b.ms).sort((x, y) => x - y);
/** Rows a second over the places' batches from `from` to `to` (fractions of them): does the rate fall as the index grows? */
const rateOver = (from: number, to: number) => {
  const part = batches.filter((b) => b.name === "search_forms_pinpoints");
  const some = part.slice(Math.floor(part.length * from), Math.ceil(part.length * to));
  return Math.round(some.reduce((n, b) => n + b.rows, 0) / (some.reduce((n, b) => n + b.ms, 0) / 1000));
};
const rowsPerSecond = run.rows / seconds;
const placesPer10GB = (10 * 1000 ** 3) / bytesPerPlace;
console.log(
  JSON.stringify({
    places,
    share,
    filledForms: filled.n,
    rows: run.rows,
    finished: run.finished,
    seconds: Number(seconds.toFixed(1)),
    rowsPerSecond: Math.round(rowsPerSecond),
    batches: batches.length,
    batchMs: { p50: sorted[sorted.length >> 1], max: sorted.at(-1) },
    rowsPerBatch: batches.map((b) => b.rows).sort((x, y) => x - y)[batches.length >> 1],
    rowsPerSecondFirstFifth: rateOver(0, 0.2),
    rowsPerSecondLastFifth: rateOver(0.8, 1),
    bytesPerPlace: Math.round(bytesPerPlace),
    placesPer10GB: Math.round(placesPer10GB),
    // Rows of a 10 GB shard: its places and a tenth as many events, as seeded here.
    hoursFor10GB: Number(((placesPer10GB * 1.1) / rowsPerSecond / 3600).toFixed(2)),
    loadavg: { before: Number(load.toFixed(1)), after: Number(loadavg()[0]!.toFixed(1)) },
  }),
);
