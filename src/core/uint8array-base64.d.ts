/**
 * Types for the TC39 "Uint8Array to/from base64 and hex" methods, which
 * workerd's V8 ships but TypeScript 5.9's lib does not declare yet (its
 * `esnext` lib gains them later; then this file goes). Node 22 lacks the
 * methods, so only code that runs in the Worker may call them (see
 * core/crypto.ts; core/secrets.ts, shared with the Node scripts, does not).
 */
type Base64Alphabet = "base64" | "base64url";

interface Uint8Array<TArrayBuffer extends ArrayBufferLike = ArrayBufferLike> {
  toBase64(options?: { alphabet?: Base64Alphabet; omitPadding?: boolean }): string;
  toHex(): string;
  setFromBase64(
    text: string,
    options?: { alphabet?: Base64Alphabet; lastChunkHandling?: "loose" | "strict" | "stop-before-partial" },
  ): { read: number; written: number };
}

interface Uint8ArrayConstructor {
  fromBase64(
    text: string,
    options?: { alphabet?: Base64Alphabet; lastChunkHandling?: "loose" | "strict" | "stop-before-partial" },
  ): Uint8Array<ArrayBuffer>;
  fromHex(text: string): Uint8Array<ArrayBuffer>;
}
