/** base64url (RFC 4648 §5, no padding) for tokens and cursors. */

export function base64urlEncode(bytes: Uint8Array): string {
  let binary = "";
  for (let i = 0; i < bytes.length; i++) binary += String.fromCharCode(bytes[i]!);
  return btoa(binary).replaceAll("+", "-").replaceAll("/", "_").replace(/=+$/, "");
}

const base64url = /^[A-Za-z0-9_-]*$/;

const ALPHABET = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";

/**
 * Decodes base64url in its one canonical spelling; `null` for anything else.
 * atob() ignores the unused low bits of a final partial character, which
 * would let one character of a token or cursor change unnoticed: refuse those.
 */
export function base64urlDecode(text: string): Uint8Array | null {
  if (!base64url.test(text) || text.length % 4 === 1) return null;
  const unusedBits = [0, 0, 4, 2][text.length % 4]!;
  if (unusedBits > 0 && ALPHABET.indexOf(text.at(-1)!) & ((1 << unusedBits) - 1)) return null;
  const binary = atob(text.replaceAll("-", "+").replaceAll("_", "/"));
  const bytes = new Uint8Array(binary.length);
  for (let i = 0; i < binary.length; i++) bytes[i] = binary.charCodeAt(i);
  return bytes;
}

const encoder = new TextEncoder();
const decoder = new TextDecoder();

export const utf8 = {
  encode: (text: string) => encoder.encode(text),
  decode: (bytes: Uint8Array) => decoder.decode(bytes),
};
