/**
 * AES-256-GCM keys derived with HKDF-SHA-256 (RFC 5869) from the signing
 * secrets: `TOKEN_SIGNING_KEY` (encrypts and decrypts) and
 * `TOKEN_SIGNING_KEY_PREVIOUS` (decrypts only, so a key rotation does not
 * break what was encrypted before it), imported once per isolate.
 *
 * Domain separation: tokens are signed by HMAC keyed with the secret itself
 * (signing.ts); here the secret is only HKDF's input keying material, and
 * each use names itself in HKDF's `info` label (cursor-keys.ts, sealed.ts),
 * so no derived key equals a token key or a key of another use.
 */
import { utf8 } from "./crypto";
import type { Bindings } from "./env";
import { MIN_SECRET_LENGTH, signingKeyProblem } from "./signing";

export type DerivedKeys = { current: CryptoKey; previous: CryptoKey | null };

// RFC 5869 §3.1: a fixed, application-specific salt is fine when the input is already a secret key.
const SALT = utf8.encode("poi-content-api");

const derived = new Map<string, Promise<CryptoKey>>();

async function deriveKey(secret: string, info: string): Promise<CryptoKey> {
  const material = await crypto.subtle.importKey("raw", utf8.encode(secret), "HKDF", false, ["deriveKey"]);
  return crypto.subtle.deriveKey(
    { name: "HKDF", hash: "SHA-256", salt: SALT, info: utf8.encode(info) },
    material,
    { name: "AES-GCM", length: 256 },
    false,
    ["encrypt", "decrypt"],
  );
}

function keyFor(secret: string, info: string): Promise<CryptoKey> {
  // The label first: it never holds a newline, so no two pairs give one entry.
  const id = `${info}\n${secret}`;
  let key = derived.get(id);
  if (!key) {
    key = deriveKey(secret, info);
    derived.set(id, key);
  }
  return key;
}

/** The keys for the use `info` names; throws, as signingKeys does, if the secret is missing or weak. */
export async function derivedKeys(env: Bindings, info: string): Promise<DerivedKeys> {
  const problem = signingKeyProblem(env);
  if (problem) throw new Error(problem);
  const previousSecret = env.TOKEN_SIGNING_KEY_PREVIOUS;
  const [current, previous] = await Promise.all([
    keyFor(env.TOKEN_SIGNING_KEY!, info),
    previousSecret && previousSecret.length >= MIN_SECRET_LENGTH ? keyFor(previousSecret, info) : null,
  ]);
  return { current, previous };
}
