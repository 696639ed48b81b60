/**
 * Magic numbers of the media types the API can accept: an upload's bytes must
 * start the way its declared type says, so an SVG, an HTML page or a script
 * declared as an image is refused, as is a PNG declared as JPEG.
 */

const ascii = (text: string) => Array.from(text, (ch) => ch.charCodeAt(0));

function startsWith(bytes: Uint8Array, prefix: readonly number[], at = 0): boolean {
  if (bytes.byteLength < at + prefix.length) return false;
  return prefix.every((byte, i) => bytes[at + i] === byte);
}

function fourcc(bytes: Uint8Array, at: number): string {
  return String.fromCharCode(bytes[at]!, bytes[at + 1]!, bytes[at + 2]!, bytes[at + 3]!);
}

/**
 * Brands of an ISO base media file's leading `ftyp` box (ISO/IEC 14496-12
 * §4.3): the major brand and the compatible ones, or none if the file does not
 * start with such a box.
 */
function ftypBrands(bytes: Uint8Array): string[] {
  if (bytes.byteLength < 16 || fourcc(bytes, 4) !== "ftyp") return [];
  const declared = new DataView(bytes.buffer, bytes.byteOffset, 4).getUint32(0);
  // 0 means "to the end of the file"; 1 (a 64-bit size) never occurs for ftyp.
  const end = declared === 0 ? bytes.byteLength : Math.min(declared, bytes.byteLength);
  if (declared !== 0 && declared < 16) return [];
  const brands = [fourcc(bytes, 8)];
  for (let at = 16; at + 4 <= end; at += 4) brands.push(fourcc(bytes, at));
  return brands;
}

const MP4_BRANDS = new Set([
  "isom",
  "iso2",
  "iso3",
  "iso4",
  "iso5",
  "iso6",
  "iso7",
  "iso8",
  "iso9",
  "mp41",
  "mp42",
  "mp71",
  "avc1",
  "dash",
  "M4V ",
  "msnv",
  "f4v ",
]);
const AVIF_BRANDS = new Set(["avif", "avis"]);

type Signature = { extension: string; matches: (bytes: Uint8Array) => boolean };

const signatures: Record<string, Signature> = {
  "image/jpeg": { extension: "jpg", matches: (b) => startsWith(b, [0xff, 0xd8, 0xff]) },
  "image/png": { extension: "png", matches: (b) => startsWith(b, [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]) },
  "image/gif": { extension: "gif", matches: (b) => startsWith(b, ascii("GIF87a")) || startsWith(b, ascii("GIF89a")) },
  "image/webp": { extension: "webp", matches: (b) => startsWith(b, ascii("RIFF")) && startsWith(b, ascii("WEBP"), 8) },
  "image/avif": { extension: "avif", matches: (b) => ftypBrands(b).some((brand) => AVIF_BRANDS.has(brand)) },
  "video/mp4": { extension: "mp4", matches: (b) => ftypBrands(b).some((brand) => MP4_BRANDS.has(brand)) },
};

/** Media types whose bytes can be verified; configuration may narrow this list, not widen it. */
export const verifiableTypes: ReadonlySet<string> = new Set(Object.keys(signatures));

/** Whether `bytes` look like a file of `type` (which must be one of `verifiableTypes`). */
export function matchesType(type: string, bytes: Uint8Array): boolean {
  return signatures[type]?.matches(bytes) ?? false;
}

/** The file extension used in storage keys of `type`. */
export function extensionOf(type: string): string {
  return signatures[type]?.extension ?? "bin";
}
