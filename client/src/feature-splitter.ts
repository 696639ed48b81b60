/**
 * The features of a GeoJSON FeatureCollection text, split as it arrives
 * chunk by chunk: each element of the top-level `features` array comes out
 * as its own JSON text, in order, so a file of a million places (hundreds
 * of megabytes) is never whole in memory, and an import can send the texts
 * as they are. The other top-level members are parsed; `type` must be
 * "FeatureCollection". Used by the client's import and by `npm run import`
 * (scripts/lib/geojson-stream.ts); it runs anywhere (no Node modules).
 */
export class NotAFeatureCollection extends Error {
  override name = "NotAFeatureCollection";
}

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const OPEN_OBJECT = 0x7b;
const CLOSE_OBJECT = 0x7d;
const OPEN_ARRAY = 0x5b;
const CLOSE_ARRAY = 0x5d;
const COMMA = 0x2c;
const COLON = 0x3a;
const isSpace = (c: number) => c === 0x20 || c === 0x0a || c === 0x0d || c === 0x09;

/**
 * Splits the text of one FeatureCollection, given chunk by chunk, into the
 * texts of its features. It tracks only what it needs (strings, nesting, the
 * top-level keys); each text is checked by whoever parses it.
 */
export class FeatureSplitter {
  private depth = 0;
  private inString = false;
  private escaped = false;
  /** At depth 1: the next string is a key. */
  private keyNext = false;
  private key = "";
  /** What the next non-blank character starts. */
  private pending: "member" | "features" | "feature" | null = null;
  private capture: "key" | "member" | "feature" | null = null;
  private pieces: string[] = [];
  private start = 0;
  private inFeatures = false;
  private featuresSeen = false;
  private type: unknown = undefined;

  /** The features completed by this chunk. */
  push(chunk: string): string[] {
    const done: string[] = [];
    this.start = 0;
    for (let i = 0; i < chunk.length; i++) {
      const c = chunk.charCodeAt(i);
      if (this.inString) {
        if (this.escaped) this.escaped = false;
        else if (c === BACKSLASH) this.escaped = true;
        else if (c === QUOTE) {
          this.inString = false;
          if (this.capture === "key") {
            this.key = JSON.parse(this.take(chunk, i + 1)) as string;
            this.capture = null;
          }
        }
        continue;
      }
      if (isSpace(c)) continue;
      if (this.pending === "features") {
        if (c !== OPEN_ARRAY) throw new NotAFeatureCollection("`features` is not an array.");
        if (this.type !== undefined && this.type !== "FeatureCollection") this.notACollection();
        this.pending = "feature";
        this.inFeatures = true;
        this.featuresSeen = true;
        this.depth++;
        continue;
      }
      if (this.pending !== null && !(this.pending === "feature" && c === CLOSE_ARRAY)) {
        this.capture = this.pending;
        this.pending = null;
        this.start = i;
        this.pieces = [];
      }
      switch (c) {
        case QUOTE:
          this.inString = true;
          if (this.depth === 1 && this.keyNext) {
            this.keyNext = false;
            this.capture = "key";
            this.start = i;
            this.pieces = [];
          }
          break;
        case OPEN_OBJECT:
        case OPEN_ARRAY:
          if (this.depth === 0 && c !== OPEN_OBJECT) this.notACollection();
          if (++this.depth === 1) this.keyNext = true;
          break;
        case COLON:
          if (this.depth === 1) this.pending = this.key === "features" ? "features" : "member";
          break;
        case COMMA:
          if (this.depth === 1) {
            this.endMember(chunk, i);
            this.keyNext = true;
          } else if (this.depth === 2 && this.inFeatures) {
            done.push(this.endFeature(chunk, i));
            this.pending = "feature";
          }
          break;
        case CLOSE_ARRAY:
        case CLOSE_OBJECT:
          if (this.depth === 2 && this.inFeatures && c === CLOSE_ARRAY) {
            if (this.capture === "feature") done.push(this.endFeature(chunk, i));
            this.pending = null;
            this.inFeatures = false;
          } else if (this.depth === 1) this.endMember(chunk, i);
          this.depth--;
          break;
      }
    }
    if (this.capture !== null) this.pieces.push(chunk.slice(this.start));
    return done;
  }

  /** After the last chunk: the document must have been one whole FeatureCollection. */
  end(): void {
    if (this.depth !== 0 || this.inString) throw new NotAFeatureCollection("The file ends in the middle of its JSON.");
    if (this.type !== "FeatureCollection" || !this.featuresSeen) this.notACollection();
  }

  private notACollection(): never {
    throw new NotAFeatureCollection("The file is not a GeoJSON FeatureCollection.");
  }

  private take(chunk: string, end: number): string {
    const text = this.pieces.length > 0 ? this.pieces.join("") + chunk.slice(0, end) : chunk.slice(this.start, end);
    this.pieces = [];
    return text;
  }

  private endMember(chunk: string, at: number): void {
    if (this.capture !== "member") return;
    this.capture = null;
    const value: unknown = JSON.parse(this.take(chunk, at));
    if (this.key === "type") {
      this.type = value;
      if (this.featuresSeen && value !== "FeatureCollection") this.notACollection();
    }
  }

  private endFeature(chunk: string, at: number): string {
    this.capture = null;
    return this.take(chunk, at).trimEnd();
  }
}
