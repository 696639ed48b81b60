/**
 * The `import` group: a GeoJSON file of a million places (BENCH_IMPORT_PLACES)
 * imported into the api Worker with `npm run import`'s own code
 * (scripts/lib/import.ts), exported again with `npm run export`'s
 * (scripts/lib/export.ts), and the two files compared feature by feature.
 * The import's places per second are set against the bare Worker's
 * `INSERT … SELECT FROM json_each(?)` of the same 1,000-row batches into the
 * same database (same triggers and indexes), half of them before the import
 * and half after, so that both write at the same table sizes on average.
 */
import { createWriteStream, statSync } from "node:fs";
import { once } from "node:events";
import { join } from "node:path";
import { searchForm } from "../src/core/search-form.ts";
import { descriptionText, tagsSearch } from "../src/fields/search-columns.ts";
import { exportFile } from "../scripts/lib/export.ts";
import { featureTexts } from "../scripts/lib/geojson-stream.ts";
import { importFile } from "../scripts/lib/import.ts";
import { cpuMillisOf, type Runtime } from "./runtime.ts";
import { createAccount, type D1 } from "./seed.ts";

const BATCH = 1000;

export type ImportReport = {
  places: number;
  fileBytes: number;
  writeFileSeconds: number;
  /** `cpuMsPerBatch`: CPU time of the whole workerd process (Worker, D1, everything) per 1,000 places. */
  import: { seconds: number; placesPerSecond: number; cpuMsPerBatch: number };
  bare: {
    seconds: number;
    placesPerSecond: number;
    cpuMsPerBatch: number;
    before: { seconds: number };
    after: { seconds: number };
  };
  /** Import ÷ bare places per second (goal ≥ 0.7). */
  ratio: number;
  export: { seconds: number; placesPerSecond: number; fileBytes: number };
  roundTrip: { compared: number; identical: boolean; firstDifference: string | null; seconds: number };
};

type Place = {
  type: "Feature";
  geometry: { type: "Point"; coordinates: number[] };
  properties: {
    name: string;
    address: string | null;
    category: number | null;
    description: string;
    media_credits: string | null;
    tags: string[];
  };
};

/**
 * Place `i`, written as the service stores and returns it (sanitized HTML, trimmed names, distinct tags), so
 * the exported feature must equal it; every third has an altitude, every fifth a category.
 */
export function place(i: number): Place {
  const longitude = -170 + ((i * 104729) % 340000) / 1000;
  const latitude = -60 + ((i * 7919) % 120000) / 1000;
  return {
    type: "Feature",
    geometry: {
      type: "Point",
      coordinates: i % 3 === 0 ? [longitude, latitude, 10 + (i % 500)] : [longitude, latitude],
    },
    properties: {
      name: `Place ${i}`,
      address: i % 2 === 0 ? `${i} Rue de la Paix, 75002 Paris` : null,
      category: i % 5 === 0 ? 1 : null,
      description: `<p>Point of interest number <strong>${i}</strong>, imported from a file.</p>`,
      media_credits: i % 7 === 0 ? "Photo: import" : null,
      tags: [`tag${i % 10}`, "import"],
    },
  };
}

/** Writes the file as a stream: no more than a chunk of it is ever in memory. */
async function writePlaces(path: string, count: number): Promise<void> {
  const out = createWriteStream(path);
  out.write('{"type":"FeatureCollection","features":[\n');
  for (let i = 0; i < count; i += BATCH) {
    const lines = [];
    for (let j = i; j < Math.min(count, i + BATCH); j++) lines.push(JSON.stringify(place(j)));
    if (!out.write(`${i > 0 ? ",\n" : ""}${lines.join(",\n")}`)) await once(out, "drain");
  }
  out.end("\n]}\n");
  await once(out, "finish");
}

/** Batch `b` as the bare Worker takes it: the row arrays scripts' bulk insert binds (src/pinpoints/bulk-insert.ts). */
function bareBatch(b: number, count: number): string {
  const rows = [];
  for (let i = b * BATCH; i < Math.min(count, (b + 1) * BATCH); i++) {
    const { geometry, properties: p } = place(i);
    const [longitude, latitude, altitude = null] = geometry.coordinates;
    rows.push([
      p.name,
      p.address,
      altitude,
      p.category,
      p.description,
      descriptionText(p.description),
      latitude,
      longitude,
      p.media_credits,
      p.tags,
      searchForm(p.name),
      searchForm(p.address),
      tagsSearch(p.tags),
    ]);
  }
  return JSON.stringify(rows);
}

/** Sends batches `from` to `to` (exclusive) to the bare Worker one after the other; seconds taken. */
async function bareInserts(rt: Runtime, account: number, from: number, to: number, count: number): Promise<number> {
  const url = new URL(`/bulk-insert?account=${account}`, rt.bare);
  const started = performance.now();
  // As the import does, the next body is made while the last one is written.
  let body = from < to ? bareBatch(from, count) : "";
  for (let b = from; b < to; b++) {
    const sent = fetch(url, { method: "POST", body, headers: { "Content-Type": "application/json" } });
    if (b + 1 < to) body = bareBatch(b + 1, count);
    const response = await sent;
    if (response.status !== 200) throw new Error(`bare bulk insert: ${response.status} ${await response.text()}`);
    await response.arrayBuffer();
  }
  return (performance.now() - started) / 1000;
}

/** What the export must give back for place `i`: the same geometry and properties, plus what the service adds. */
function difference(i: number, expected: Place, got: Record<string, unknown>): string | null {
  const properties = { ...(got.properties as Record<string, unknown>) };
  const { media_url, created_at, updated_at, ...rest } = properties;
  const same =
    got.type === "Feature" &&
    typeof got.id === "number" &&
    JSON.stringify(got.geometry) === JSON.stringify(expected.geometry) &&
    JSON.stringify(rest) === JSON.stringify(expected.properties) &&
    media_url === null &&
    typeof created_at === "string" &&
    typeof updated_at === "string";
  return same ? null : `feature ${i}: expected ${JSON.stringify(expected)}, got ${JSON.stringify(got)}`;
}

/** Reads the exported file as a stream and compares each feature with the place it came from, in order. */
async function compareRoundTrip(path: string, count: number): Promise<ImportReport["roundTrip"]> {
  const started = performance.now();
  let compared = 0;
  let firstDifference: string | null = null;
  for await (const texts of featureTexts(path)) {
    for (const text of texts) {
      firstDifference ??=
        compared < count ? difference(compared, place(compared), JSON.parse(text)) : `extra feature ${compared}`;
      compared++;
    }
  }
  if (compared < count) firstDifference ??= `only ${compared} of ${count} features`;
  return {
    compared,
    identical: firstDifference === null,
    firstDifference,
    seconds: (performance.now() - started) / 1000,
  };
}

/** The whole group; `log` reports progress; `aroundImport` wraps the import alone (bench/profile.ts). */
export async function runImportGroup(
  rt: Runtime,
  db: D1,
  dir: string,
  places: number,
  log: (message: string) => void,
  aroundImport: <T>(run: () => Promise<T>) => Promise<T> = (run) => run(),
): Promise<ImportReport> {
  const importer = await createAccount(db, "bench-import");
  const bare = await createAccount(db, "bench-bare");
  const service = { base: rt.api.origin, clientId: importer.client.id, clientSecret: importer.client.secret };

  const file = join(dir, "places.geojson");
  let t0 = performance.now();
  await writePlaces(file, places);
  const writeFileSeconds = (performance.now() - t0) / 1000;
  const fileBytes = statSync(file).size;
  log(`import: wrote ${places} places, ${(fileBytes / 2 ** 20).toFixed(0)} MiB, in ${writeFileSeconds.toFixed(1)} s`);

  const batches = Math.ceil(places / BATCH);
  const half = Math.floor(batches / 2);
  const cpu = () => (rt.workerdPid === null ? NaN : cpuMillisOf(rt.workerdPid));
  let cpu0 = cpu();
  const before = await bareInserts(rt, bare.accountId, 0, half, places);
  let bareCpu = cpu() - cpu0;
  log(`import: bare inserts of batches 0-${half - 1}: ${((half * BATCH) / before).toFixed(0)} places/s`);
  // The import's whole time, from reading the file (it reads it twice: to check it, then to send it).
  t0 = performance.now();
  cpu0 = cpu();
  const imported = await aroundImport(() => importFile(file, service, { restart: true }));
  const importCpu = cpu() - cpu0;
  const importSeconds = (performance.now() - t0) / 1000;
  if (imported.imported !== places) throw new Error(`imported ${imported.imported} of ${places}`);
  log(
    `import: npm run import: ${(places / importSeconds).toFixed(0)} places/s (${importSeconds.toFixed(1)} s), ` +
      `workerd CPU ${(importCpu / batches).toFixed(1)} ms per 1,000 (bare: ${(bareCpu / half).toFixed(1)} ms)`,
  );
  cpu0 = cpu();
  const after = await bareInserts(rt, bare.accountId, half, batches, places);
  bareCpu += cpu() - cpu0;
  log(
    `import: bare inserts of batches ${half}-${batches - 1}: ${((places - half * BATCH) / after).toFixed(0)} places/s`,
  );
  const bareRate = places / (before + after);

  const exported = join(dir, "exported.geojson");
  t0 = performance.now();
  const out = await exportFile(exported, service, { restart: true });
  const exportSeconds = (performance.now() - t0) / 1000;
  log(`import: npm run export: ${(out.count / exportSeconds).toFixed(0)} places/s (${exportSeconds.toFixed(1)} s)`);
  const roundTrip = await compareRoundTrip(exported, places);
  log(`import: round trip: ${roundTrip.identical ? "identical" : roundTrip.firstDifference}`);

  const importRate = places / importSeconds;
  return {
    places,
    fileBytes,
    writeFileSeconds,
    import: { seconds: importSeconds, placesPerSecond: importRate, cpuMsPerBatch: importCpu / batches },
    bare: {
      seconds: before + after,
      placesPerSecond: bareRate,
      cpuMsPerBatch: bareCpu / batches,
      before: { seconds: before },
      after: { seconds: after },
    },
    ratio: importRate / bareRate,
    export: { seconds: exportSeconds, placesPerSecond: out.count / exportSeconds, fileBytes: statSync(exported).size },
    roundTrip,
  };
}
