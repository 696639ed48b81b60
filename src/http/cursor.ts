/**
 * Cursors: a position in a collection's order (db/keyset.ts) or in the change
 * feed, opaque to clients. A cursor is AES-256-GCM ciphertext (key from
 * core/cursor-keys.ts) of the position, with the `scope` it was issued for
 * (account, collection, filters) as additional authenticated data: nothing of
 * it can be read, not even a sequence number of the log all accounts share,
 * and a tampered or foreign cursor fails authentication, a 400, never a 500.
 *
 * Layout, base64url: a random 96-bit nonce (NIST SP 800-38D §8.2.2), the
 * ciphertext, the 128-bit tag. Random nonces are safe far beyond 2^32
 * cursors per key, which a key rotation resets.
 */
import { cursorKeys } from "../core/cursor-keys";
import { base64urlDecode, base64urlEncode, timingSafeEqual, utf8 } from "../core/crypto";
import type { Bindings } from "../core/env";
import { ApiError } from "../core/problem";
import { hmacSign, signingKeys } from "../core/signing";
import type { Bound } from "../db/keyset";

/** A position to continue from: after or before a sort key, maybe inclusive. */
export type Position = NonNullable<Bound>;

/** What a cursor encrypts: direction, key (a one-value key as the bare value), inclusive. */
type CursorPayload = { d: "a" | "b"; k: number | string | (number | string)[]; i?: 1 };

const NONCE_BYTES = 12;
const TAG_BYTES = 16;
// Versioned, so a later layout can never decrypt as this one.
const associatedData = (scope: string) => utf8.encode(`cursor.v1 ${scope}`);

/** The cursor for `position` in `scope`. */
export async function encodeCursor(env: Bindings, scope: string, position: Position): Promise<string> {
  const { direction, key, inclusive } = position;
  const payload: CursorPayload = { d: direction === "after" ? "a" : "b", k: key.length === 1 ? key[0]! : [...key] };
  if (inclusive) payload.i = 1;
  const iv = crypto.getRandomValues(new Uint8Array(NONCE_BYTES));
  const { current } = await cursorKeys(env);
  const sealed = await crypto.subtle.encrypt(
    { name: "AES-GCM", iv, additionalData: associatedData(scope) },
    current,
    utf8.encode(JSON.stringify(payload)),
  );
  const bytes = new Uint8Array(NONCE_BYTES + sealed.byteLength);
  bytes.set(iv);
  bytes.set(new Uint8Array(sealed), NONCE_BYTES);
  return base64urlEncode(bytes);
}

const invalidCursor = (detail: string) =>
  new ApiError("invalid_cursor", detail, { errors: [{ parameter: "cursor", detail }] });

/** The position a cursor names; 400 unless this service issued it for `scope`. */
export async function decodeCursor(env: Bindings, cursor: string, scope: string): Promise<Position> {
  // base64urlDecode accepts only the canonical spelling, so no character of a cursor can change unnoticed.
  const bytes = base64urlDecode(cursor);
  if (!bytes || bytes.byteLength <= NONCE_BYTES + TAG_BYTES) {
    throw invalidCursor("The cursor is malformed; follow the next and previous URLs as given.");
  }
  const keys = await cursorKeys(env);
  const sealed = { name: "AES-GCM", iv: bytes.subarray(0, NONCE_BYTES), additionalData: associatedData(scope) };
  let plain: ArrayBuffer | null = null;
  for (const key of [keys.current, keys.previous]) {
    if (key && !plain) plain = await crypto.subtle.decrypt(sealed, key, bytes.subarray(NONCE_BYTES)).catch(() => null);
  }
  if (!plain) {
    throw invalidCursor(
      "The cursor was altered, belongs to another query (account, collection or filters), or was not issued " +
        "by this service; follow the next and previous URLs as given.",
    );
  }
  const payload = JSON.parse(utf8.decode(new Uint8Array(plain))) as CursorPayload;
  return {
    direction: payload.d === "a" ? "after" : "before",
    key: Array.isArray(payload.k) ? payload.k : [payload.k],
    ...(payload.i === 1 ? { inclusive: true } : {}),
  };
}

/**
 * Whether `cursor` is one this service issued for `scope` in the form before
 * cursors were encrypted: base64url JSON with a truncated HMAC, readable by
 * anyone. The change feed answers such a cursor 410, its "resync" signal, so
 * a client that was offline since then recovers; a page cursor of that form
 * is simply invalid.
 */
export async function isReadableFormCursor(env: Bindings, cursor: string, scope: string): Promise<boolean> {
  const [body = "", signature = "", extra] = cursor.split(".");
  const payloadBytes = body ? base64urlDecode(body) : null;
  const signatureBytes = signature ? base64urlDecode(signature) : null;
  if (!payloadBytes || signatureBytes?.byteLength !== 16 || extra !== undefined) return false;
  const keys = await signingKeys(env);
  let authentic = false;
  for (const key of [keys.current, keys.previous]) {
    if (key && !authentic) {
      const expected = (await hmacSign(key, `cursor.${body}`)).subarray(0, 16);
      authentic = timingSafeEqual(expected, signatureBytes);
    }
  }
  if (!authentic) return false;
  try {
    return (JSON.parse(utf8.decode(payloadBytes)) as { s?: unknown }).s === scope;
  } catch {
    return false;
  }
}
