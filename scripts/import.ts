/**
 * `npm run import -- FILE`: creates a pinpoint for each place of a GeoJSON
 * FeatureCollection (Point features) or a CSV file (`name,latitude,longitude`
 * columns, then any of address, altitude, category, description,
 * media_credits, tags separated by `;`), in batches of 1,000 through the
 * API's bulk import (all or nothing per batch).
 *
 * Resumable: FILE.import-state.json records how many features are in, and
 * the batch in flight. Run the same command again after an interruption and
 * it goes on where it stopped; a batch whose answer was lost is looked up
 * (its pinpoints, after the last id known, changed since it was sent) and not
 * sent twice. Each batch also carries an Idempotency-Key.
 *
 *   npm run import -- FILE [--base URL] [--client-id ID --client-secret SECRET] [--restart]
 */
import { createHash } from "node:crypto";
import { readFileSync, rmSync, statSync } from "node:fs";
import { parseArgs } from "node:util";
import {
  parseCsv,
  progress,
  readState,
  serviceFrom,
  TRANSFER_OPTIONS,
  tokenOf,
  UsageError,
  writeState,
  type Service,
} from "./lib/transfer.ts";

const USAGE = `Usage: npm run import -- FILE [options]

Creates a pinpoint for each place of FILE: a GeoJSON FeatureCollection of
Point features (.geojson/.json), or a CSV file (.csv) with a header line
naming at least name, latitude, longitude (also: address, altitude, category,
description, media_credits, tags separated by ";").

Options:
  --base URL             The service (default $POI_BASE_URL or http://localhost:8787)
  --client-id ID         Client credentials (default $POI_CLIENT_ID/$POI_CLIENT_SECRET,
  --client-secret SECRET  else the development client of npm start)
  --restart              Forget an interrupted run of this file and start over
  -h, --help             Show this help.`;

const BATCH = 1000;

type Feature = {
  type: "Feature";
  geometry: { type: "Point"; coordinates: number[] };
  properties: Record<string, unknown>;
};
type State = { fingerprint: string; base: string; done: number; lastId: number; inFlight: { sentAt: string } | null };

const NUMERIC = new Set(["altitude", "category"]);

/** The features of a CSV file: one per record, columns named by its header. */
function csvFeatures(text: string): Feature[] {
  const [header, ...records] = parseCsv(text);
  const columns = (header ?? []).map((c) => c.trim().toLowerCase());
  for (const required of ["name", "latitude", "longitude"]) {
    if (!columns.includes(required)) throw new UsageError(`The CSV header must name a "${required}" column.`);
  }
  return records.map((record) => {
    const properties: Record<string, unknown> = {};
    let latitude = NaN;
    let longitude = NaN;
    columns.forEach((column, i) => {
      const value = record[i] ?? "";
      if (column === "latitude") latitude = Number(value);
      else if (column === "longitude") longitude = Number(value);
      else if (value === "") return;
      else if (column === "tags") properties.tags = value.split(";");
      else if (NUMERIC.has(column)) properties[column] = Number(value);
      else if (column !== "id") properties[column] = value;
    });
    return { type: "Feature", geometry: { type: "Point", coordinates: [longitude, latitude] }, properties };
  });
}

function featuresOf(file: string, text: string): Feature[] {
  if (/\.csv$/i.test(file)) return csvFeatures(text);
  const document = JSON.parse(text) as { type?: string; features?: Feature[] };
  if (document.type !== "FeatureCollection" || !Array.isArray(document.features)) {
    throw new UsageError(`${file} is not a GeoJSON FeatureCollection.`);
  }
  return document.features;
}

/** Finds a sent batch's pinpoints if the service created them: same names in order, ids after `lastId`. */
async function findCommitted(
  service: Service,
  token: string,
  batch: Feature[],
  state: State,
): Promise<number[] | null> {
  const since = new Date(Date.parse(state.inFlight!.sentAt) - 60_000).toISOString();
  let url: string | null = `${service.base}/v3.0/pinpoints?limit=1000&updated_since=${encodeURIComponent(since)}`;
  const after: { id: number; name: string }[] = [];
  while (url) {
    const response = await fetch(url, { headers: { Authorization: `Bearer ${token}` } });
    if (!response.ok)
      throw new Error(`Checking the interrupted batch failed: ${response.status} ${await response.text()}`);
    const page = (await response.json()) as { results: { id: number; name: string }[]; next: string | null };
    after.push(...page.results.filter((p) => p.id > state.lastId));
    url = page.next;
  }
  const names = batch.map((f) => String(f.properties?.name ?? "").trim());
  for (let i = 0; i + names.length <= after.length; i++) {
    if (names.every((name, j) => after[i + j]!.name === name)) return after.slice(i, i + names.length).map((p) => p.id);
  }
  return null;
}

/** A 400's pointers, renumbered from the batch to the whole file. */
function problemText(body: string, offset: number): string {
  try {
    const problem = JSON.parse(body) as { detail?: string; errors?: { pointer?: string; detail: string }[] };
    const lines = (problem.errors ?? []).map(
      (e) =>
        `  ${(e.pointer ?? "").replace(/^\/features\/(\d+)/, (_, n: string) => `/features/${offset + Number(n)}`)}: ${e.detail}`,
    );
    return [problem.detail ?? "", ...lines].join("\n");
  } catch {
    return body;
  }
}

async function main(): Promise<void> {
  const { values, positionals } = parseArgs({
    allowPositionals: true,
    options: TRANSFER_OPTIONS,
  });
  if (values.help) return void console.log(USAGE);
  const [file] = positionals;
  if (!file || positionals.length > 1) throw new UsageError("Give one file to import.");
  const service = serviceFrom(values);
  const text = readFileSync(file, "utf8");
  const features = featuresOf(file, text);
  const fingerprint = `${statSync(file).size}:${createHash("sha256").update(text).digest("hex")}`;
  const statePath = `${file}.import-state.json`;
  if (values.restart) rmSync(statePath, { force: true });
  const saved = readState<State>(statePath);
  if (saved && (saved.fingerprint !== fingerprint || saved.base !== service.base)) {
    throw new UsageError(`${statePath} is from another file or service; use --restart to start over.`);
  }
  const state: State = saved ?? { fingerprint, base: service.base, done: 0, lastId: 0, inFlight: null };
  const token = await tokenOf(service);
  const resumed = state.done;
  if (resumed > 0)
    console.error(
      `Resuming: ${resumed.toLocaleString("en-US")} of ${features.length.toLocaleString("en-US")} already imported.`,
    );
  const bar = progress("Imported", features.length, resumed);

  while (state.done < features.length) {
    const batch = features.slice(state.done, state.done + BATCH);
    let ids = state.inFlight ? await findCommitted(service, token, batch, state) : null;
    if (!ids) {
      state.inFlight = { sentAt: new Date().toISOString() };
      writeState(statePath, state);
      const response = await fetch(`${service.base}/v3.0/pinpoints`, {
        method: "POST",
        headers: {
          Authorization: `Bearer ${token}`,
          "Content-Type": "application/geo+json",
          "Idempotency-Key": `import-${fingerprint.slice(-32)}-${state.done}`,
        },
        body: JSON.stringify({ type: "FeatureCollection", features: batch }),
      });
      const body = await response.text();
      if (response.status !== 201) {
        state.inFlight = null;
        writeState(statePath, state);
        bar.finish(state.done);
        throw new Error(
          `Batch from feature ${state.done} refused (${response.status}); nothing of it was written.\n${problemText(body, state.done)}`,
        );
      }
      ids = (JSON.parse(body) as { ids: number[] }).ids;
    }
    state.done += batch.length;
    state.lastId = Math.max(state.lastId, ...ids);
    state.inFlight = null;
    writeState(statePath, state);
    bar.update(state.done);
  }
  const { seconds, rate } = bar.finish(state.done);
  rmSync(statePath, { force: true });
  console.error(
    `Done: ${(state.done - resumed).toLocaleString("en-US")} places imported in ${seconds.toFixed(1)} s ` +
      `(${Math.round(rate).toLocaleString("en-US")}/s)${resumed ? `, ${resumed.toLocaleString("en-US")} before the interruption` : ""}.`,
  );
}

main().catch((error: unknown) => {
  console.error(
    error instanceof UsageError ? `${error.message}\n\n${USAGE}` : error instanceof Error ? error.message : error,
  );
  process.exitCode = error instanceof UsageError ? 2 : 1;
});
