/**
 * `npm run export -- FILE`: writes every pinpoint of the account to FILE, a
 * GeoJSON FeatureCollection (or CSV when FILE ends in .csv, the columns
 * `npm run import` reads), following the API's page links 1,000 at a time.
 *
 * Resumable: the file is written as FILE.partial with FILE.export-state.json
 * beside it (the next page's URL and the bytes written up to it); run the
 * same command again after an interruption and it goes on from there. The
 * finished file replaces FILE in one rename.
 *
 *   npm run export -- FILE [--base URL] [--client-id ID --client-secret SECRET] [--restart]
 */
import { closeSync, openSync, renameSync, rmSync, truncateSync, writeSync } from "node:fs";
import { parseArgs } from "node:util";
import {
  csvField,
  progress,
  readState,
  serviceFrom,
  tokenOf,
  TRANSFER_OPTIONS,
  UsageError,
  writeState,
} from "./lib/transfer.ts";

const USAGE = `Usage: npm run export -- FILE [options]

Writes every pinpoint of the account to FILE: a GeoJSON FeatureCollection, or
CSV when FILE ends in .csv.

Options:
  --base URL             The service (default $POI_BASE_URL or http://localhost:8787)
  --client-id ID         Client credentials (default $POI_CLIENT_ID/$POI_CLIENT_SECRET,
  --client-secret SECRET  else the development client of npm start)
  --restart              Forget an interrupted export to FILE and start over
  -h, --help             Show this help.`;

const CSV_COLUMNS = [
  "id",
  "name",
  "latitude",
  "longitude",
  "altitude",
  "address",
  "category",
  "description",
  "media_credits",
  "tags",
];

type Feature = {
  type: "Feature";
  id: number;
  geometry: { coordinates: number[] };
  properties: Record<string, unknown>;
};
type Page = { features: Feature[]; links: { rel: string; href: string }[] };
type State = { base: string; next: string | null; bytes: number; count: number };

/** Feature as GeoJSON text, without the per-feature API links (they name this service, not the data). */
function featureText(feature: Feature): string {
  const { links: _links, ...rest } = feature as Feature & { links?: unknown };
  return JSON.stringify(rest);
}

function csvLine(feature: Feature): string {
  const [longitude, latitude, altitude = null] = feature.geometry.coordinates;
  const values: Record<string, unknown> = { ...feature.properties, id: feature.id, latitude, longitude, altitude };
  return CSV_COLUMNS.map((column) => csvField(values[column])).join(",") + "\n";
}

async function main(): Promise<void> {
  const { values, positionals } = parseArgs({
    allowPositionals: true,
    options: TRANSFER_OPTIONS,
  });
  if (values.help) return void console.log(USAGE);
  const [file] = positionals;
  if (!file || positionals.length > 1) throw new UsageError("Give one file to export to.");
  const csv = /\.csv$/i.test(file);
  const service = serviceFrom(values);
  const partial = `${file}.partial`;
  const statePath = `${file}.export-state.json`;
  if (values.restart) rmSync(statePath, { force: true });
  const saved = readState<State>(statePath);
  if (saved && saved.base !== service.base)
    throw new UsageError(`${statePath} is from another service; use --restart.`);
  const first = `${service.base}/v3.0/pinpoints?limit=1000&format=geojson`;
  const state: State = saved ?? { base: service.base, next: first, bytes: 0, count: 0 };
  const token = await tokenOf(service);

  // Back to the last page boundary recorded: what was written after it is written again.
  const fd = openSync(partial, saved ? "r+" : "w");
  truncateSync(partial, state.bytes);
  const write = (text: string) => {
    state.bytes += writeSync(fd, text, state.bytes);
  };
  if (state.bytes === 0) write(csv ? `${CSV_COLUMNS.join(",")}\n` : '{"type":"FeatureCollection","features":[\n');
  if (saved) console.error(`Resuming: ${state.count.toLocaleString("en-US")} places already written.`);
  const bar = progress("Exported", null, state.count);

  while (state.next) {
    const response = await fetch(state.next, { headers: { Authorization: `Bearer ${token}` } });
    if (!response.ok) throw new Error(`GET ${state.next} failed: ${response.status} ${await response.text()}`);
    const page = (await response.json()) as Page;
    const text = page.features
      .map((feature, i) => (csv ? csvLine(feature) : `${state.count + i > 0 ? ",\n" : ""}${featureText(feature)}`))
      .join("");
    write(text);
    state.count += page.features.length;
    state.next = page.links.find((link) => link.rel === "next")?.href ?? null;
    writeState(statePath, state);
    bar.update(state.count);
  }
  if (!csv) write("\n]}\n");
  closeSync(fd);
  renameSync(partial, file);
  rmSync(statePath, { force: true });
  const { seconds, rate } = bar.finish(state.count);
  console.error(
    `Done: ${state.count.toLocaleString("en-US")} places written to ${file} in ${seconds.toFixed(1)} s ` +
      `(${Math.round(rate).toLocaleString("en-US")}/s).`,
  );
}

main().catch((error: unknown) => {
  console.error(
    error instanceof UsageError ? `${error.message}\n\n${USAGE}` : error instanceof Error ? error.message : error,
  );
  process.exitCode = error instanceof UsageError ? 2 : 1;
});
