/**
 * Bulk import of GeoJSON Point features through `POST /v3.0/pinpoints` with
 * `Content-Type: application/geo+json`, at most 1,000 features a request (the
 * service's limit), one batch after another so the ids come back in feature
 * order. A Blob (a browser's File, Node's `fs.openAsBlob(path)`) is read as a
 * stream and split into features without parsing them, so a file of a million
 * places is never whole in memory and each feature is sent as written.
 */
import { FeatureSplitter } from "./feature-splitter.ts";

/** One Point feature whose properties are a pinpoint's fields (see `components["schemas"]["PinpointImport"]`). */
export type ImportFeature = {
  type: "Feature";
  geometry: { type: "Point"; coordinates: number[] };
  properties: Record<string, unknown>;
};

/** What to import: a FeatureCollection, features one by one (sync or async), or a FeatureCollection file. */
export type ImportSource =
  | { type: "FeatureCollection"; features: Iterable<ImportFeature> }
  | Iterable<ImportFeature>
  | AsyncIterable<ImportFeature>
  | Blob;

export type ImportProgress = {
  /** Features imported so far, this batch included. */
  imported: number;
  /** Batches sent so far. */
  batches: number;
  /** The ids of this batch's new pinpoints, in feature order. */
  ids: number[];
};

export type ImportOptions = {
  /** Features per request, 1 to 1,000 (default 1,000). */
  batchSize?: number;
  /** Called after each batch is in. */
  onProgress?: (progress: ImportProgress) => void;
  signal?: AbortSignal;
};

/** Sends one batch (a FeatureCollection's JSON text) and answers its new ids; throws what the service refused. */
export type SendBatch = (body: string, firstFeature: number, signal?: AbortSignal) => Promise<number[]>;

async function* featureTexts(source: ImportSource): AsyncGenerator<string> {
  if (source instanceof Blob) {
    const splitter = new FeatureSplitter();
    const reader = source.stream().pipeThrough(new TextDecoderStream()).getReader();
    for (let chunk = await reader.read(); !chunk.done; chunk = await reader.read()) yield* splitter.push(chunk.value);
    splitter.end();
    return;
  }
  const features = "features" in source ? source.features : source;
  for await (const feature of features) yield JSON.stringify(feature);
}

/** Imports every feature of `source`; resolves with the new pinpoints' ids in feature order. */
export async function importFeatures(source: ImportSource, send: SendBatch, options: ImportOptions = {}) {
  const batchSize = options.batchSize ?? 1000;
  if (!Number.isInteger(batchSize) || batchSize < 1 || batchSize > 1000) {
    throw new RangeError("batchSize must be an integer from 1 to 1,000");
  }
  const ids: number[] = [];
  let batch: string[] = [];
  let batches = 0;
  const flush = async () => {
    const body = `{"type":"FeatureCollection","features":[${batch.join(",")}]}`;
    const batchIds = await send(body, ids.length, options.signal);
    ids.push(...batchIds);
    batch = [];
    options.onProgress?.({ imported: ids.length, batches: ++batches, ids: batchIds });
  };
  for await (const text of featureTexts(source)) {
    batch.push(text);
    if (batch.length === batchSize) await flush();
  }
  if (batch.length > 0) await flush();
  return ids;
}
