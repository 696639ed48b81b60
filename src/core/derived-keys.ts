/**
 * Keys derived with HKDF-SHA-256 (RFC 5869) from the signing secrets,
 * `TOKEN_SIGNING_KEY` (every use) and `TOKEN_SIGNING_KEY_PREVIOUS` (reading
 * only, so a key rotation does not break what clients hold), imported once per
 * isolate: the cursors' key (cursor-keys.ts) and the bookmarks'
 * (src/http/bookmark-header.ts).
 *
 * Domain separation: tokens are signed by HMAC keyed with the secret itself
 * (signing.ts); here the secret is only HKDF's input keying material, and each
 * use's `info` label names that one use, so no derived key equals a token key
 * or another use's key, nor any key derived later under another label.
 */
import { utf8 } from "./crypto";
import type { Bindings } from "./env";
import { MIN_SECRET_LENGTH, signingKeyProblem } from "./signing";

/** The key of the current secret, and of the previous one if it is set. */
export type DerivedKeys = { current: CryptoKey; previous: CryptoKey | null };

/** One use of a derived key: its HKDF label, what kind of key it is and what it may do. */
export type KeyUse = { info: string; algorithm: SubtleCryptoImportKeyAlgorithm; usages: string[] };

// RFC 5869 §3.1: a fixed, application-specific salt is fine when the input is already a secret key.
const SALT = utf8.encode("poi-content-api");

const derived = new Map<string, Promise<CryptoKey>>();

async function deriveKey(secret: string, use: KeyUse): Promise<CryptoKey> {
  const material = await crypto.subtle.importKey("raw", utf8.encode(secret), "HKDF", false, ["deriveKey"]);
  return crypto.subtle.deriveKey(
    { name: "HKDF", hash: "SHA-256", salt: SALT, info: utf8.encode(use.info) },
    material,
    use.algorithm,
    false,
    use.usages,
  );
}

function keyFor(secret: string, use: KeyUse): Promise<CryptoKey> {
  const id = `${use.info}\u0000${secret}`;
  let key = derived.get(id);
  if (!key) {
    key = deriveKey(secret, use);
    derived.set(id, key);
  }
  return key;
}

/** The keys of `use` under this Worker's secrets; throws, as signingKeys does, if the secret is missing or weak. */
export async function derivedKeys(env: Bindings, use: KeyUse): Promise<DerivedKeys> {
  const problem = signingKeyProblem(env);
  if (problem) throw new Error(problem);
  const previousSecret = env.TOKEN_SIGNING_KEY_PREVIOUS;
  const [current, previous] = await Promise.all([
    keyFor(env.TOKEN_SIGNING_KEY!, use),
    previousSecret && previousSecret.length >= MIN_SECRET_LENGTH ? keyFor(previousSecret, use) : null,
  ]);
  return { current, previous };
}
