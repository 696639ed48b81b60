/**
 * The keys that encrypt cursors: AES-256-GCM keys derived with HKDF-SHA-256
 * (RFC 5869) from the signing secrets, `TOKEN_SIGNING_KEY` (encrypts and
 * decrypts) and `TOKEN_SIGNING_KEY_PREVIOUS` (decrypts only, so a key
 * rotation does not break the links clients hold), imported once per isolate.
 *
 * Domain separation: tokens are signed by HMAC keyed with the secret itself
 * (signing.ts); here the secret is only HKDF's input keying material, and the
 * `info` label names this one use, so no cursor key equals a token key, nor
 * any key derived later for another use under another label.
 */
import { utf8 } from "./crypto";
import type { Bindings } from "./env";
import { MIN_SECRET_LENGTH, signingKeyProblem } from "./signing";

export type CursorKeys = { current: CryptoKey; previous: CryptoKey | null };

// RFC 5869 §3.1: a fixed, application-specific salt is fine when the input is already a secret key.
const SALT = utf8.encode("poi-content-api");
const INFO = utf8.encode("cursor encryption, AES-256-GCM, v1");

const derived = new Map<string, Promise<CryptoKey>>();

async function deriveKey(secret: string): Promise<CryptoKey> {
  const material = await crypto.subtle.importKey("raw", utf8.encode(secret), "HKDF", false, ["deriveKey"]);
  return crypto.subtle.deriveKey(
    { name: "HKDF", hash: "SHA-256", salt: SALT, info: INFO },
    material,
    { name: "AES-GCM", length: 256 },
    false,
    ["encrypt", "decrypt"],
  );
}

function keyFor(secret: string): Promise<CryptoKey> {
  let key = derived.get(secret);
  if (!key) {
    key = deriveKey(secret);
    derived.set(secret, key);
  }
  return key;
}

/** The cursor keys of this Worker's secrets; throws, as signingKeys does, if the secret is missing or weak. */
export async function cursorKeys(env: Bindings): Promise<CursorKeys> {
  const problem = signingKeyProblem(env);
  if (problem) throw new Error(problem);
  const previousSecret = env.TOKEN_SIGNING_KEY_PREVIOUS;
  const [current, previous] = await Promise.all([
    keyFor(env.TOKEN_SIGNING_KEY!),
    previousSecret && previousSecret.length >= MIN_SECRET_LENGTH ? keyFor(previousSecret) : null,
  ]);
  return { current, previous };
}
