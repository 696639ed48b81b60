/**
 * Base64 decoding of uploads. The bytes are decoded straight into one
 * preallocated buffer by the runtime's native `Uint8Array#setFromBase64`
 * (TC39 "Uint8Array to/from base64", shipped in V8 and so in workerd), so a
 * large upload exists once as text and once as bytes: no intermediate binary
 * string, no per-character arrays.
 */

const dataUrlPrefix = /^data:[^,]*;base64,/i;
const urlSafe = /[-_]/;

/**
 * Decodes standard or URL-safe base64 (RFC 4648 §4 and §5): padding optional,
 * ASCII whitespace ignored, and a `data:…;base64,` prefix (what a browser's
 * `FileReader.readAsDataURL` gives) skipped. `null` when the text is not base64.
 */
export function decodeBase64(text: string): Uint8Array | null {
  const prefix = dataUrlPrefix.exec(text.slice(0, 256));
  const payload = prefix ? text.slice(prefix[0].length) : text;
  // Every 4 characters carry 3 bytes, so this bounds the decoded size (exact without padding or whitespace).
  const target = new Uint8Array(Math.floor((payload.length * 3) / 4));
  try {
    // The two alphabets differ only in "+/" vs "-_"; a text mixing them is invalid either way.
    const { written } = target.setFromBase64(payload, {
      alphabet: urlSafe.test(payload) ? "base64url" : "base64",
      lastChunkHandling: "loose",
    });
    return target.subarray(0, written);
  } catch (error) {
    if (error instanceof SyntaxError) return null;
    throw error;
  }
}
