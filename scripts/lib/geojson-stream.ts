/**
 * The features of a GeoJSON FeatureCollection file, read as a stream with the
 * client's splitter (client/src/feature-splitter.ts): a file of a million
 * places is never whole in memory.
 */
import { createReadStream } from "node:fs";
import { FeatureSplitter } from "../../client/src/feature-splitter.ts";

export { FeatureSplitter, NotAFeatureCollection } from "../../client/src/feature-splitter.ts";

/** The feature texts of a FeatureCollection file, a chunk's worth at a time. */
export async function* featureTexts(path: string, onBytes?: (bytes: Buffer) => void): AsyncGenerator<string[]> {
  const splitter = new FeatureSplitter();
  const decoder = new TextDecoder();
  for await (const bytes of createReadStream(path, { highWaterMark: 1 << 20 }) as AsyncIterable<Buffer>) {
    onBytes?.(bytes);
    const features = splitter.push(decoder.decode(bytes, { stream: true }));
    if (features.length > 0) yield features;
  }
  const rest = splitter.push(decoder.decode());
  splitter.end();
  if (rest.length > 0) yield rest;
}
