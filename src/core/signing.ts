/**
 * HMAC-SHA-256 keys from the Worker secrets, imported once per isolate.
 * `TOKEN_SIGNING_KEY` signs; `TOKEN_SIGNING_KEY_PREVIOUS`, when set, is
 * accepted for verification only, so a key rotation does not log every client
 * out at once. Each key is named by a `kid` derived from it.
 */
import type { Bindings } from "./env";
import { base64urlEncode, utf8 } from "./crypto";

export type SigningKey = { kid: string; key: CryptoKey };
export type SigningKeys = { current: SigningKey; previous: SigningKey | null };

/** Secrets shorter than this are refused: an HMAC key must not be guessable. */
export const MIN_SECRET_LENGTH = 32;

const imported = new Map<string, Promise<SigningKey>>();

async function importKey(secret: string): Promise<SigningKey> {
  const raw = utf8.encode(secret);
  const [key, digest] = await Promise.all([
    crypto.subtle.importKey("raw", raw, { name: "HMAC", hash: "SHA-256" }, false, ["sign", "verify"]),
    crypto.subtle.digest("SHA-256", raw),
  ]);
  return { kid: base64urlEncode(new Uint8Array(digest).subarray(0, 6)), key };
}

function keyFor(secret: string): Promise<SigningKey> {
  let key = imported.get(secret);
  if (!key) {
    key = importKey(secret);
    imported.set(secret, key);
  }
  return key;
}

/** What is wrong with the configured signing secret, or null when it is usable. */
export function signingKeyProblem(env: Bindings): string | null {
  const secret = env.TOKEN_SIGNING_KEY;
  if (!secret) return "TOKEN_SIGNING_KEY is not set";
  if (secret.length < MIN_SECRET_LENGTH) return `TOKEN_SIGNING_KEY is shorter than ${MIN_SECRET_LENGTH} characters`;
  return null;
}

/** The signing keys configured for this Worker; throws if the secret is missing or weak. */
export async function signingKeys(env: Bindings): Promise<SigningKeys> {
  const problem = signingKeyProblem(env);
  const secret = env.TOKEN_SIGNING_KEY;
  if (problem || !secret) throw new Error(problem ?? "TOKEN_SIGNING_KEY is not set");
  const previousSecret = env.TOKEN_SIGNING_KEY_PREVIOUS;
  const [current, previous] = await Promise.all([
    keyFor(secret),
    previousSecret && previousSecret.length >= MIN_SECRET_LENGTH ? keyFor(previousSecret) : null,
  ]);
  return { current, previous };
}

/** Finds the verification key a token or cursor names. */
export function keyById(keys: SigningKeys, kid: unknown): SigningKey | null {
  if (kid === keys.current.kid) return keys.current;
  if (keys.previous && kid === keys.previous.kid) return keys.previous;
  return null;
}

export async function hmacSign(key: SigningKey, data: string): Promise<Uint8Array> {
  return new Uint8Array(await crypto.subtle.sign("HMAC", key.key, utf8.encode(data)));
}

/** Constant-time verification (Web Crypto compares the MAC). */
export function hmacVerify(key: SigningKey, signature: Uint8Array, data: string): Promise<boolean> {
  return crypto.subtle.verify("HMAC", key.key, signature, utf8.encode(data));
}
