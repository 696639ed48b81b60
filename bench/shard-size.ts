/**
 * Bytes per pinpoint with every index (docs/scaling.md, "Scale on paper"):
 * the migrations applied to a fresh SQLite file (node:sqlite, the engine D1
 * runs), the scale group's places seeded (bench/scale-data.ts: names, tags, a
 * sentence of description, a tenth as many events), then the file's size
 * divided by the places.
 *
 *   npx node bench/shard-size.ts [PLACES]      # default 1,000,000
 */
import { rmSync } from "node:fs";
import { seedScale } from "./scale-data.ts";
import { sqliteShard } from "./sqlite-shard.ts";

const places = Number(process.argv[2] ?? 1_000_000);
const { dir, sqlite, db } = sqliteShard("shard-size");
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
