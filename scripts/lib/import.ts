/**
 * What `npm run import` does, for the command and the benchmark alike:
 * creates a pinpoint for each place of a GeoJSON FeatureCollection (Point
 * features) or a CSV file, in batches of 1,000 through the API's bulk import
 * (all or nothing per batch), one batch at a time so that ids follow the
 * file's order.
 *
 * A GeoJSON file is streamed (scripts/lib/geojson-stream.ts): read once to fingerprint
 * and count it, then again feature by feature, each feature's text sent as it
 * is; the next batch is read while the service writes the last one.
 *
 * Resumable: FILE.import-state.json records how many features are in, and
 * the batch in flight. Run the same command again after an interruption and
 * it goes on where it stopped; a batch whose answer was lost is looked up
 * (its pinpoints, after the last id known, changed since it was sent) and not
 * sent twice. Each batch also carries an Idempotency-Key.
 */
import { createHash } from "node:crypto";
import { readFileSync, rmSync, statSync } from "node:fs";
import { featureTexts, NotAFeatureCollection } from "./geojson-stream.ts";
import { parseCsv, progress, readState, tokenOf, UsageError, writeState, type Service } from "./transfer.ts";

const BATCH = 1000;

type State = { fingerprint: string; base: string; done: number; lastId: number; inFlight: { sentAt: string } | null };

/** Where the features come from: how many, a fingerprint of the file, and their texts in order. */
type Source = { total: number; fingerprint: string; texts: () => AsyncIterable<string[]> };

const NUMERIC = new Set(["altitude", "category"]);

/** A CSV file's features: one per record, columns named by its header. */
function csvSource(file: string): Source {
  const text = readFileSync(file, "utf8");
  const [header, ...records] = parseCsv(text);
  const columns = (header ?? []).map((c) => c.trim().toLowerCase());
  for (const required of ["name", "latitude", "longitude"]) {
    if (!columns.includes(required)) throw new UsageError(`The CSV header must name a "${required}" column.`);
  }
  const features = records.map((record) => {
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
    return JSON.stringify({
      type: "Feature",
      geometry: { type: "Point", coordinates: [longitude, latitude] },
      properties,
    });
  });
  return {
    total: features.length,
    fingerprint: `${statSync(file).size}:${createHash("sha256").update(text).digest("hex")}`,
    texts: async function* () {
      yield features;
    },
  };
}

/** A GeoJSON file, read through once to check, count and fingerprint it before anything is sent. */
async function geojsonSource(file: string): Promise<Source> {
  const hash = createHash("sha256");
  let total = 0;
  try {
    for await (const texts of featureTexts(file, (bytes) => hash.update(bytes))) total += texts.length;
  } catch (error) {
    if (error instanceof NotAFeatureCollection || error instanceof SyntaxError) {
      throw new UsageError(`${file}: ${error.message}`);
    }
    throw error;
  }
  return {
    total,
    fingerprint: `${statSync(file).size}:${hash.digest("hex")}`,
    texts: () => featureTexts(file),
  };
}

/** The feature texts after the first `skip`, in batches of `size`. */
async function* batchesOf(texts: AsyncIterable<string[]>, skip: number, size: number): AsyncGenerator<string[]> {
  let batch: string[] = [];
  let seen = 0;
  for await (const chunk of texts) {
    for (const text of chunk) {
      if (seen++ < skip) continue;
      batch.push(text);
      if (batch.length === size) {
        yield batch;
        batch = [];
      }
    }
  }
  if (batch.length > 0) yield batch;
}

/** Finds a sent batch's pinpoints if the service created them: same names in order, ids after `lastId`. */
async function findCommitted(service: Service, token: string, batch: string[], state: State): Promise<number[] | null> {
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
  const names = batch.map((text) => {
    const feature = JSON.parse(text) as { properties?: { name?: unknown } | null };
    return String(feature.properties?.name ?? "").trim();
  });
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

export type ImportResult = { imported: number; resumed: number; seconds: number; rate: number };

/** Imports `file` into the service; throws (with the refused batch's problems) when a batch is refused. */
export async function importFile(
  file: string,
  service: Service,
  options: { restart?: boolean } = {},
): Promise<ImportResult> {
  const source = /\.csv$/i.test(file) ? csvSource(file) : await geojsonSource(file);
  const statePath = `${file}.import-state.json`;
  if (options.restart) rmSync(statePath, { force: true });
  const saved = readState<State>(statePath);
  if (saved && (saved.fingerprint !== source.fingerprint || saved.base !== service.base)) {
    throw new UsageError(`${statePath} is from another file or service; use --restart to start over.`);
  }
  const state: State = saved ?? {
    fingerprint: source.fingerprint,
    base: service.base,
    done: 0,
    lastId: 0,
    inFlight: null,
  };
  const token = await tokenOf(service);
  const resumed = state.done;
  if (resumed > 0)
    console.error(
      `Resuming: ${resumed.toLocaleString("en-US")} of ${source.total.toLocaleString("en-US")} already imported.`,
    );
  const bar = progress("Imported", source.total, resumed);

  const batches = batchesOf(source.texts(), state.done, BATCH);
  // The next batch is read while the service writes the current one.
  let next = batches.next();
  for (let current = await next; !current.done; current = await next) {
    const batch = current.value;
    next = batches.next();
    let ids = state.inFlight ? await findCommitted(service, token, batch, state) : null;
    if (!ids) {
      state.inFlight = { sentAt: new Date().toISOString() };
      writeState(statePath, state);
      const response = await fetch(`${service.base}/v3.0/pinpoints`, {
        method: "POST",
        headers: {
          Authorization: `Bearer ${token}`,
          "Content-Type": "application/geo+json",
          "Idempotency-Key": `import-${source.fingerprint.slice(-32)}-${state.done}`,
        },
        body: `{"type":"FeatureCollection","features":[${batch.join(",")}]}`,
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
  return { imported: state.done - resumed, resumed, seconds, rate };
}
