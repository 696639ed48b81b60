/**
 * Page cursors: a position in a collection's order (db/keyset.ts), opaque to
 * clients and HMAC-signed, bound to the account, collection and filters they
 * were issued for (the `scope`), so a tampered or foreign cursor is a 400,
 * never a 500.
 */
import { base64urlDecode, base64urlEncode, timingSafeEqual, utf8 } from "../core/crypto";
import type { Bindings } from "../core/env";
import { ApiError } from "../core/problem";
import { hmacSign, signingKeys } from "../core/signing";
import type { Bound } from "../db/keyset";

/** A position to continue from: after or before a sort key, maybe inclusive. */
export type Position = NonNullable<Bound>;

/**
 * What a cursor carries: scope, direction, key, inclusive. A one-value key is
 * the bare number, as cursors were before composite orders existed, so links
 * issued then keep working.
 */
type CursorPayload = { s: string; d: "a" | "b"; k: number | string | (number | string)[]; i?: 1 };

// Domain separation: a cursor signature can never be mistaken for a token signature.
const signed = (payload: string) => `cursor.${payload}`;
const SIGNATURE_BYTES = 16;

/** The cursor for `position` in `scope`. */
export async function encodeCursor(env: Bindings, scope: string, position: Position): Promise<string> {
  const { direction, key, inclusive } = position;
  const payload: CursorPayload = {
    s: scope,
    d: direction === "after" ? "a" : "b",
    k: key.length === 1 ? key[0]! : [...key],
  };
  if (inclusive) payload.i = 1;
  const body = base64urlEncode(utf8.encode(JSON.stringify(payload)));
  const { current } = await signingKeys(env);
  const signature = (await hmacSign(current, signed(body))).subarray(0, SIGNATURE_BYTES);
  return `${body}.${base64urlEncode(signature)}`;
}

const invalidCursor = (detail: string) =>
  new ApiError("invalid_cursor", detail, { errors: [{ parameter: "cursor", detail }] });

/** The position a cursor names; 400 unless this service issued it for `scope`. */
export async function decodeCursor(env: Bindings, cursor: string, scope: string): Promise<Position> {
  const [body = "", signature = "", extra] = cursor.split(".");
  // base64urlDecode accepts only the canonical spelling, so no character of a cursor can change unnoticed.
  const payloadBytes = body ? base64urlDecode(body) : null;
  const signatureBytes = signature ? base64urlDecode(signature) : null;
  if (!payloadBytes || signatureBytes?.byteLength !== SIGNATURE_BYTES || extra !== undefined) {
    throw invalidCursor("The cursor is malformed; follow the next and previous URLs as given.");
  }
  // The MAC is truncated, so compare it ourselves (in constant time) rather than with verify().
  const keys = await signingKeys(env);
  let authentic = false;
  for (const key of [keys.current, keys.previous]) {
    if (key && !authentic) {
      const expected = (await hmacSign(key, signed(body))).subarray(0, SIGNATURE_BYTES);
      authentic = timingSafeEqual(expected, signatureBytes);
    }
  }
  if (!authentic) throw invalidCursor("The cursor has been altered or was not issued by this service.");
  const payload = JSON.parse(utf8.decode(payloadBytes)) as CursorPayload;
  if (payload.s !== scope) throw invalidCursor("The cursor belongs to a different query; follow the URLs as given.");
  return {
    direction: payload.d === "a" ? "after" : "before",
    key: Array.isArray(payload.k) ? payload.k : [payload.k],
    ...(payload.i === 1 ? { inclusive: true } : {}),
  };
}
