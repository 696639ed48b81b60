/**
 * Client credentials and publishable keys. Secrets are 256 random bits (keys 192) generated here, so a single
 * SHA-256 is enough to store them safely (no password stretching needed);
 * only the hash is kept. Shared by the Worker and the Node scripts (the
 * registration tool, seeding, benchmarks), so it uses only what Node 22 and
 * workerd both have and imports nothing; Worker-only helpers are in crypto.ts.
 */

function hex(bytes: ArrayBuffer | Uint8Array): string {
  return Array.from(new Uint8Array(bytes), (b) => b.toString(16).padStart(2, "0")).join("");
}

function randomBase64url(byteLength: number): string {
  const bytes = crypto.getRandomValues(new Uint8Array(byteLength));
  return btoa(String.fromCharCode(...bytes))
    .replaceAll("+", "-")
    .replaceAll("/", "_")
    .replaceAll("=", "");
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

/** A new single-use link secret (an invitation's): 256 random bits, base64url. */
export function generateLinkToken(): string {
  return randomBase64url(32);
}

/** The prefix that tells a publishable key from an access token. */
export const PUBLISHABLE_KEY_PREFIX = "pk_";

/** A new publishable key: `pk_` and 192 random bits, base64url. */
export function generatePublishableKey(): string {
  return PUBLISHABLE_KEY_PREFIX + randomBase64url(24);
}

/** Hex SHA-256 of a secret, as stored in `clients.secret_hash`. */
export async function hashSecret(secret: string): Promise<string> {
  return hex(await crypto.subtle.digest("SHA-256", new TextEncoder().encode(secret)));
}
