/**
 * Client credentials. Secrets are 256 random bits generated here, so a single
 * SHA-256 is enough to store them safely (no password stretching needed);
 * only the hash is kept. Shared by the Worker and the registration tool, so
 * it uses Web Crypto only and imports nothing.
 */

function hex(bytes: ArrayBuffer | Uint8Array): string {
  return Array.from(new Uint8Array(bytes), (b) => b.toString(16).padStart(2, "0")).join("");
}

function randomBase64url(byteLength: number): string {
  const bytes = crypto.getRandomValues(new Uint8Array(byteLength));
  return btoa(String.fromCharCode(...bytes))
    .replaceAll("+", "-")
    .replaceAll("/", "_")
    .replace(/=+$/, "");
}

/** `byteLength` random bytes as hex: unguessable identifiers (client ids, media keys). */
export function randomHex(byteLength: number): string {
  return hex(crypto.getRandomValues(new Uint8Array(byteLength)));
}

/** A new client id: 128 random bits, hex, URL- and form-safe. */
export function generateClientId(): string {
  return randomHex(16);
}

/** A new client secret: 256 random bits, base64url. */
export function generateClientSecret(): string {
  return randomBase64url(32);
}

/** Hex SHA-256 of a secret, as stored in `clients.secret_hash`. */
export async function hashSecret(secret: string): Promise<string> {
  return hex(await crypto.subtle.digest("SHA-256", new TextEncoder().encode(secret)));
}

/** Constant-time comparison of two hashes (or MACs) of equal length, as text. */
export function hashesEqual(a: string, b: string): boolean {
  if (a.length !== b.length) return false;
  let diff = 0;
  for (let i = 0; i < a.length; i++) diff |= a.charCodeAt(i) ^ b.charCodeAt(i);
  return diff === 0;
}

/** Hash the presented secret, then compare in constant time (hash-then-compare). */
export async function secretMatches(secret: string, storedHash: string): Promise<boolean> {
  return hashesEqual(await hashSecret(secret), storedHash);
}
