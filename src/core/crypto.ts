/**
 * Byte encodings and comparisons for tokens and cursors, on the runtime's
 * native primitives: `Uint8Array.fromBase64`/`toBase64` (TC39, in workerd's
 * V8) and Web Crypto's `timingSafeEqual` (a Workers extension). Worker-only:
 * the Node scripts use core/secrets.ts, which needs neither.
 */
import { hashSecret } from "./secrets";

const BASE64URL = { alphabet: "base64url", omitPadding: true } as const;

/** base64url (RFC 4648 §5) without padding. */
export function base64urlEncode(bytes: Uint8Array): string {
  return bytes.toBase64(BASE64URL);
}

/**
 * Decodes base64url in its one canonical spelling; `null` for anything else.
 * The decoder skips whitespace and ignores the unused low bits of a final
 * partial character, which would let one character of a token or cursor
 * change unnoticed: only text that encodes back to itself is accepted.
 */
export function base64urlDecode(text: string): Uint8Array | null {
  let bytes: Uint8Array;
  try {
    bytes = Uint8Array.fromBase64(text, { alphabet: "base64url", lastChunkHandling: "loose" });
  } catch {
    return null;
  }
  return bytes.toBase64(BASE64URL) === text ? bytes : null;
}

const encoder = new TextEncoder();
const decoder = new TextDecoder();

export const utf8 = {
  encode: (text: string) => encoder.encode(text),
  decode: (bytes: Uint8Array) => decoder.decode(bytes),
};

/** Constant-time comparison of two byte strings (MACs, hashes); different lengths are simply unequal. */
export function timingSafeEqual(a: Uint8Array, b: Uint8Array): boolean {
  return a.byteLength === b.byteLength && crypto.subtle.timingSafeEqual(a, b);
}

/** Hash the presented secret, then compare in constant time with the stored hash (hash-then-compare). */
export async function secretMatches(secret: string, storedHash: string): Promise<boolean> {
  return timingSafeEqual(utf8.encode(await hashSecret(secret)), utf8.encode(storedHash));
}
