/**
 * What `npm run export` does, for the command and the benchmark alike:
 * writes every pinpoint of the account to a file, a GeoJSON FeatureCollection
 * (or CSV when it ends in .csv, the columns `npm run import` reads), following
 * the API's page links 1,000 at a time, a page in memory at a time.
 *
 * Resumable: the file is written as FILE.partial with FILE.export-state.json
 * beside it (the next page's URL and the bytes written up to it); run the
 * same command again after an interruption and it goes on from there. The
 * finished file replaces FILE in one rename.
 */
import { closeSync, openSync, renameSync, rmSync, truncateSync, writeSync } from "node:fs";
import { csvField, progress, readState, tokenOf, UsageError, writeState, type Service } from "./transfer.ts";

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

/** `count`: the places in the file; `rate`: of this run's, per second. */
export type ExportResult = { count: number; resumed: number; seconds: number; rate: number };

/** Writes every pinpoint of the service's account to `file`. */
export async function exportFile(
  file: string,
  service: Service,
  options: { restart?: boolean } = {},
): Promise<ExportResult> {
  const csv = /\.csv$/i.test(file);
  const partial = `${file}.partial`;
  const statePath = `${file}.export-state.json`;
  if (options.restart) rmSync(statePath, { force: true });
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
  const resumed = state.count;
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
  return { count: state.count, resumed, seconds, rate };
}
