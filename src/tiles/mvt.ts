/**
 * A Mapbox Vector Tile 2.1 encoder for one layer of points
 * (https://github.com/mapbox/vector-tile-spec/tree/master/2.1, vector_tile.proto):
 * the protobuf wire format is varints and length-prefixed fields, a page of
 * code, so the Worker carries no dependency for it. Keys and values are
 * shared across the layer's features, as §4.2 asks.
 */

/** A property value: strings, non-negative integers, other numbers and booleans each have their wire type. */
export type MvtValue = string | number | boolean;
export type MvtFeature = { id?: number; x: number; y: number; properties: Record<string, MvtValue | undefined> };

class Writer {
  private buffer: Uint8Array<ArrayBuffer>;
  length = 0;

  constructor(size = 256) {
    this.buffer = new Uint8Array(size);
  }

  private reserve(n: number) {
    if (this.length + n <= this.buffer.length) return;
    const grown = new Uint8Array(Math.max(this.buffer.length * 2, this.length + n));
    grown.set(this.buffer.subarray(0, this.length));
    this.buffer = grown;
  }

  /** Empties the writer to be used again (features reuse three: no allocation per feature). */
  reset() {
    this.length = 0;
    return this;
  }

  /** An unsigned varint; exact up to 2^53 (ids), so no 32-bit operators. */
  varint(n: number) {
    this.reserve(10);
    while (n >= 0x80) {
      this.buffer[this.length++] = (n % 0x80) | 0x80;
      n = Math.floor(n / 0x80);
    }
    this.buffer[this.length++] = n;
  }

  key(field: number, wireType: 0 | 1 | 2 | 5) {
    this.varint(field * 8 + wireType);
  }

  bytes(field: number, data: Uint8Array) {
    this.key(field, 2);
    this.varint(data.length);
    this.reserve(data.length);
    this.buffer.set(data, this.length);
    this.length += data.length;
  }

  /** A length-delimited field holding what `other` wrote. */
  message(field: number, other: Writer) {
    this.bytes(field, other.view());
  }

  double(field: number, n: number) {
    this.key(field, 1);
    this.reserve(8);
    new DataView(this.buffer.buffer).setFloat64(this.length, n, true);
    this.length += 8;
  }

  /** What was written, without a copy (valid until the next write). */
  view(): Uint8Array<ArrayBuffer> {
    return this.buffer.subarray(0, this.length);
  }

  finish(): Uint8Array<ArrayBuffer> {
    return this.buffer.slice(0, this.length);
  }
}

const utf8 = new TextEncoder();
const zigzag = (n: number) => (n < 0 ? -2 * n - 1 : 2 * n);

/** vector_tile.proto's Value: one of its fields per kind. */
function encodeValue(value: MvtValue): Uint8Array {
  const w = new Writer(16);
  if (typeof value === "string") w.bytes(1, utf8.encode(value));
  else if (typeof value === "boolean") {
    w.key(7, 0);
    w.varint(value ? 1 : 0);
  } else if (Number.isSafeInteger(value) && value >= 0) {
    w.key(5, 0);
    w.varint(value);
  } else w.double(3, value);
  return w.finish();
}

/**
 * The tile's bytes: one layer `name` of point features in tile coordinates
 * (0 to `extent` - 1), or no layer at all when there is no feature (an empty
 * tile is zero bytes, a valid tile with no layers: §4.1 asks a layer to have features).
 */
export function encodeTile(name: string, features: readonly MvtFeature[], extent = 4096): Uint8Array<ArrayBuffer> {
  if (features.length === 0) return new Uint8Array(0);
  const keys = new Map<string, number>();
  const values = new Map<string, { index: number; bytes: Uint8Array }>();
  const layer = new Writer(64 * features.length + 256);
  layer.key(15, 0);
  layer.varint(2);
  layer.bytes(1, utf8.encode(name));
  const [f, tags, geometry] = [new Writer(), new Writer(64), new Writer(16)];
  for (const feature of features) {
    f.reset();
    tags.reset();
    if (feature.id !== undefined) {
      f.key(1, 0);
      f.varint(feature.id);
    }
    for (const [key, value] of Object.entries(feature.properties)) {
      if (value === undefined) continue;
      let k = keys.get(key);
      if (k === undefined) keys.set(key, (k = keys.size));
      const id = `${typeof value}:${String(value)}`;
      let v = values.get(id);
      if (v === undefined) values.set(id, (v = { index: values.size, bytes: encodeValue(value) }));
      tags.varint(k);
      tags.varint(v.index);
    }
    f.message(2, tags);
    f.key(3, 0);
    f.varint(1); // POINT
    geometry.reset().varint(9); // MoveTo, one point
    geometry.varint(zigzag(feature.x));
    geometry.varint(zigzag(feature.y));
    f.message(4, geometry);
    layer.message(2, f);
  }
  for (const key of keys.keys()) layer.bytes(3, utf8.encode(key));
  for (const { bytes } of values.values()) layer.bytes(4, bytes);
  layer.key(5, 0);
  layer.varint(extent);
  const tile = new Writer(layer.length + 8);
  tile.message(3, layer);
  return tile.finish();
}
