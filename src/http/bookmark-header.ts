/**
 * `X-D1-Bookmark` (the name Cloudflare's own examples use) and its one format:
 * what answers carry, what requests may send, and the sealing between D1's
 * bookmark and the header. A module without middleware, so CORS in app.ts and
 * the API reference (src/openapi/) name the header and its patterns without
 * importing the session middleware (http/middleware/d1-session.ts).
 *
 * D1's bookmark is its commit position in the whole database: every account's
 * writes move it, so sent as it is it would tell each reader how much all
 * others write. An answer carries it sealed instead: encrypted, so nothing of
 * the position can be read, and randomized, so two answers at the same
 * position look unrelated (which would otherwise tell that nobody wrote in
 * between); authenticated together with the name of the database it is a
 * position of (a shard's binding name, docs/scaling.md), so a bookmark that
 * was altered, or not issued by this service, is refused, and one of another
 * database (the shard an account has moved from) is told apart and not
 * followed.
 *
 * Layout, 80 base64url characters: a random 128-bit IV, D1's bookmark (its
 * four hexadecimal groups as 28 bytes) encrypted with AES-256-CTR, and the
 * first 128 bits of an HMAC-SHA-256 over the database's name, the IV and the
 * ciphertext (encrypt-then-MAC), each key derived from the signing secrets
 * under its own label (core/derived-keys.ts). Not AES-GCM as the cursors
 * (http/cursor.ts): every answer to an access token carries a bookmark, and
 * GCM's random 96-bit nonces are good for about 2^32 messages per key; a
 * random 128-bit IV for 2^64.
 */
import { base64urlDecode, base64urlEncode, timingSafeEqual, utf8 } from "../core/crypto";
import { derivedKeys, type DerivedKeys } from "../core/derived-keys";
import type { Bindings, DatabasePosition } from "../core/env";

export const BOOKMARK_HEADER = "X-D1-Bookmark";

/** What answers carry: 80 base64url characters (60 bytes, so every character is significant). */
export const ISSUED_BOOKMARK_PATTERN = "^[A-Za-z0-9_-]{80}$";

/** D1's own bookmark, four hexadecimal groups, 8-8-8-32: what answers carried before they were sealed. */
export const D1_BOOKMARK_PATTERN = "^[0-9a-f]{8}-[0-9a-f]{8}-[0-9a-f]{8}-[0-9a-f]{32}$";

/** What a request may send: a bookmark in either form; anything else is a 400 where the header is taken. */
export const BOOKMARK_PATTERN = `^(${ISSUED_BOOKMARK_PATTERN.slice(1, -1)}|${D1_BOOKMARK_PATTERN.slice(1, -1)})$`;

/**
 * What a request's header holds: nothing; a sealed position; D1's own bookmark, accepted but not
 * followed (anyone could write one ahead of the database, and D1's answer to that would tell how far
 * ahead it is); or something else, which `detail` explains.
 */
export type SentBookmark =
  | { kind: "none" }
  | { kind: "sealed"; position: DatabasePosition }
  | { kind: "unsealed" }
  | { kind: "invalid"; detail: string };

const ISSUED = new RegExp(ISSUED_BOOKMARK_PATTERN);
const D1_BOOKMARK = new RegExp(D1_BOOKMARK_PATTERN);

const IV_BYTES = 16;
const POSITION_BYTES = 28;
const TAG_BYTES = 16;

type BookmarkKeys = { encryption: DerivedKeys; authentication: DerivedKeys };

async function bookmarkKeys(env: Bindings): Promise<BookmarkKeys> {
  const [encryption, authentication] = await Promise.all([
    derivedKeys(env, {
      info: "bookmark encryption, AES-256-CTR, v1",
      algorithm: { name: "AES-CTR", length: 256 },
      usages: ["encrypt", "decrypt"],
    }),
    derivedKeys(env, {
      info: "bookmark authentication, HMAC-SHA-256, v1",
      algorithm: { name: "HMAC", hash: "SHA-256", length: 256 },
      usages: ["sign"],
    }),
  ]);
  return { encryption, authentication };
}

const ctr = (iv: Uint8Array) => ({ name: "AES-CTR", counter: iv, length: 64 });

/** The tag over the database's name (a binding name, which holds no line break), the IV and the ciphertext. */
async function tagOf(key: CryptoKey, database: string, sealed: Uint8Array): Promise<Uint8Array> {
  const label = utf8.encode(`bookmark.v1 ${database}\n`);
  const input = new Uint8Array(label.byteLength + sealed.byteLength);
  input.set(label);
  input.set(sealed, label.byteLength);
  return new Uint8Array(await crypto.subtle.sign("HMAC", key, input)).subarray(0, TAG_BYTES);
}

/** The header's value for `position`; null when D1's bookmark is not of the shape this format holds. */
export async function sealBookmark(env: Bindings, position: DatabasePosition): Promise<string | null> {
  if (!D1_BOOKMARK.test(position.bookmark)) return null;
  const plain = Uint8Array.fromHex(position.bookmark.replaceAll("-", ""));
  const keys = await bookmarkKeys(env);
  const iv = crypto.getRandomValues(new Uint8Array(IV_BYTES));
  const cipher = new Uint8Array(await crypto.subtle.encrypt(ctr(iv), keys.encryption.current, plain));
  const bytes = new Uint8Array(IV_BYTES + POSITION_BYTES + TAG_BYTES);
  bytes.set(iv);
  bytes.set(cipher, IV_BYTES);
  const tag = await tagOf(keys.authentication.current, position.database, bytes.subarray(0, -TAG_BYTES));
  bytes.set(tag, bytes.byteLength - TAG_BYTES);
  return base64urlEncode(bytes);
}

/** D1's bookmark from its 28 bytes: the four groups, lower-case hexadecimal. */
function d1Bookmark(bytes: Uint8Array): string {
  const hex = bytes.toHex();
  return `${hex.slice(0, 8)}-${hex.slice(8, 16)}-${hex.slice(16, 24)}-${hex.slice(24)}`;
}

/**
 * What the header sent holds. `databases` are the names a sealed bookmark may be of (every shard's);
 * each is tried with the current key, then the previous one.
 */
export async function openBookmark(
  env: Bindings,
  header: string | undefined,
  databases: readonly string[],
): Promise<SentBookmark> {
  if (header === undefined) return { kind: "none" };
  const value = header.trim();
  if (D1_BOOKMARK.test(value)) return { kind: "unsealed" };
  const bytes = ISSUED.test(value) ? base64urlDecode(value) : null;
  if (!bytes) return { kind: "invalid", detail: "must be a bookmark exactly as an earlier response's header gave it" };
  const keys = await bookmarkKeys(env);
  const sealed = bytes.subarray(0, -TAG_BYTES);
  const tag = bytes.subarray(-TAG_BYTES);
  const generations = [
    [keys.authentication.current, keys.encryption.current],
    [keys.authentication.previous, keys.encryption.previous],
  ] as const;
  for (const [authentication, encryption] of generations) {
    if (!authentication || !encryption) continue;
    for (const database of databases) {
      if (!timingSafeEqual(await tagOf(authentication, database, sealed), tag)) continue;
      const iv = sealed.subarray(0, IV_BYTES);
      const plain = await crypto.subtle.decrypt(ctr(iv), encryption, sealed.subarray(IV_BYTES));
      return { kind: "sealed", position: { bookmark: d1Bookmark(new Uint8Array(plain)), database } };
    }
  }
  return {
    kind: "invalid",
    detail: "was altered or not issued by this service; send a bookmark exactly as an earlier response gave it",
  };
}
