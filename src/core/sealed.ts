/**
 * Secrets at rest: values the service must read back (webhook signing
 * secrets, and the answers idempotency keys replay, which may carry a
 * secret) are stored encrypted, so a copy of the database (an export, a
 * backup) reveals none of them. AES-256-GCM under a key derived from the
 * signing secret under its own label (derived-keys.ts), with a random 96-bit
 * nonce (NIST SP 800-38D §8.2.2) and the value's `context` (what it is, and
 * whose) as additional authenticated data, so a sealed value copied into
 * another row fails to open.
 *
 * A sealed value is text: `sealed:v1:<kid>:<base64url of nonce, ciphertext
 * and tag>`, where `kid` names the signing key it was sealed under (the
 * token `kid` of signing.ts), so the scheduled job finds what to seal again
 * under the current key after a rotation. Any other text is a value stored
 * before values were sealed: it opens as itself, and the job seals it.
 */
import { base64urlDecode, base64urlEncode, utf8 } from "./crypto";
import { derivedKeys } from "./derived-keys";
import type { Bindings } from "./env";
import { signingKeys } from "./signing";

/** The start of every sealed value, whatever its key. */
export const SEALED_PREFIX = "sealed:v1:";

export type SealingKey = { kid: string; key: CryptoKey };
export type SealingKeys = { current: SealingKey; previous: SealingKey | null };

const USE = {
  info: "secrets at rest, AES-256-GCM, v1",
  algorithm: { name: "AES-GCM", length: 256 },
  usages: ["encrypt", "decrypt"],
};
const NONCE_BYTES = 12;
const TAG_BYTES = 16;
const additionalData = (context: string) => utf8.encode(`sealed.v1 ${context}`);

/** The sealing keys of this Worker's secrets; throws, as signingKeys does, if the secret is missing or weak. */
export async function sealingKeys(env: Bindings): Promise<SealingKeys> {
  const [signing, derived] = await Promise.all([signingKeys(env), derivedKeys(env, USE)]);
  const previous = signing.previous && derived.previous && { kid: signing.previous.kid, key: derived.previous };
  return { current: { kid: signing.current.kid, key: derived.current }, previous };
}

/** The start of every value sealed under `key`. */
export const sealedPrefix = (key: SealingKey) => `${SEALED_PREFIX}${key.kid}:`;

/** `plain` sealed under the current key, for `context`. */
export async function seal(keys: SealingKeys, context: string, plain: string): Promise<string> {
  const iv = crypto.getRandomValues(new Uint8Array(NONCE_BYTES));
  const sealed = await crypto.subtle.encrypt(
    { name: "AES-GCM", iv, additionalData: additionalData(context) },
    keys.current.key,
    utf8.encode(plain),
  );
  const bytes = new Uint8Array(NONCE_BYTES + sealed.byteLength);
  bytes.set(iv);
  bytes.set(new Uint8Array(sealed), NONCE_BYTES);
  return sealedPrefix(keys.current) + base64urlEncode(bytes);
}

/**
 * The value `stored` holds: itself if it is plain (stored before sealing);
 * null if it was sealed under a key this Worker no longer has, for another
 * context, or was altered.
 */
export async function unseal(keys: SealingKeys, context: string, stored: string): Promise<string | null> {
  if (!stored.startsWith(SEALED_PREFIX)) return stored;
  const [kid, data, extra] = stored.slice(SEALED_PREFIX.length).split(":");
  const key = [keys.current, keys.previous].find((candidate) => candidate?.kid === kid);
  const bytes = data === undefined || extra !== undefined ? null : base64urlDecode(data);
  if (!key || !bytes || bytes.byteLength < NONCE_BYTES + TAG_BYTES) return null;
  const plain = await crypto.subtle
    .decrypt(
      { name: "AES-GCM", iv: bytes.subarray(0, NONCE_BYTES), additionalData: additionalData(context) },
      key.key,
      bytes.subarray(NONCE_BYTES),
    )
    .catch(() => null);
  return plain === null ? null : utf8.decode(new Uint8Array(plain));
}
