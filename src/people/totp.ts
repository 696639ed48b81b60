/**
 * Time-based one-time passwords (RFC 6238) over HOTP (RFC 4226), with Web
 * Crypto's HMAC-SHA-1: the parameters every authenticator app defaults to
 * (30-second steps, 6 digits, SHA-1), so a QR code of the `otpauth://` URI
 * needs no options. A code is accepted for its own step and one step either
 * side (RFC 6238 §5.2: clocks drift, people type slowly), and never twice:
 * only a step after the last one used (§5.2, "MUST NOT accept the second
 * attempt of the same OTP").
 */
import { utf8 } from "../core/crypto";

export const TOTP_STEP_SECONDS = 30;
export const TOTP_DIGITS = 6;
/** Steps accepted on either side of the current one. */
export const TOTP_WINDOW = 1;
/** RFC 4226 §4 asks at least 128 bits of secret and recommends 160: SHA-1's block-sized key. */
const SECRET_BYTES = 20;

const BASE32 = "ABCDEFGHIJKLMNOPQRSTUVWXYZ234567";

/** RFC 4648 §6 base32, unpadded, as authenticator apps read a secret. */
export function base32Encode(bytes: Uint8Array): string {
  let bits = 0;
  let value = 0;
  let text = "";
  for (const byte of bytes) {
    value = (value << 8) | byte;
    bits += 8;
    while (bits >= 5) {
      text += BASE32[(value >>> (bits - 5)) & 31];
      bits -= 5;
    }
  }
  if (bits > 0) text += BASE32[(value << (5 - bits)) & 31];
  return text;
}

/** The bytes of unpadded base32 (case and spaces ignored); null for anything else. */
export function base32Decode(text: string): Uint8Array | null {
  const clean = text.replaceAll(/[\s=]/g, "").toUpperCase();
  const bytes: number[] = [];
  let bits = 0;
  let value = 0;
  for (const char of clean) {
    const index = BASE32.indexOf(char);
    if (index < 0) return null;
    value = ((value << 5) | index) & 0xffff;
    bits += 5;
    if (bits >= 8) {
      bytes.push((value >>> (bits - 8)) & 255);
      bits -= 8;
    }
  }
  return new Uint8Array(bytes);
}

/** A new secret: 160 random bits. */
export const newTotpSecret = () => crypto.getRandomValues(new Uint8Array(SECRET_BYTES));

/** The time step of an instant (RFC 6238 §4.2: T = floor((now - T0) / X), T0 = 0). */
export const totpStep = (nowMs: number) => Math.floor(nowMs / 1000 / TOTP_STEP_SECONDS);

/** HOTP (RFC 4226 §5.3) of `counter`: HMAC-SHA-1, dynamic truncation, `digits` decimal digits. */
export async function hotp(secret: Uint8Array, counter: number, digits = TOTP_DIGITS): Promise<string> {
  const key = await crypto.subtle.importKey("raw", secret, { name: "HMAC", hash: "SHA-1" }, false, ["sign"]);
  const message = new DataView(new ArrayBuffer(8));
  message.setUint32(0, Math.floor(counter / 2 ** 32));
  message.setUint32(4, counter >>> 0);
  const mac = new Uint8Array(await crypto.subtle.sign("HMAC", key, message));
  const offset = mac[19]! & 0xf;
  const binary = ((mac[offset]! & 0x7f) << 24) | (mac[offset + 1]! << 16) | (mac[offset + 2]! << 8) | mac[offset + 3]!;
  return String(binary % 10 ** digits).padStart(digits, "0");
}

/**
 * The step whose code `code` is, among the current step and TOTP_WINDOW either side, if it is after
 * `lastStep` (the last one used); null otherwise. Every candidate is computed and compared, so how long it
 * takes does not say which step matched.
 */
export async function matchingStep(
  secret: Uint8Array,
  code: string,
  nowMs: number,
  lastStep: number | null,
): Promise<number | null> {
  if (!new RegExp(`^[0-9]{${TOTP_DIGITS}}$`).test(code)) return null;
  const now = totpStep(nowMs);
  let found: number | null = null;
  for (let step = now - TOTP_WINDOW; step <= now + TOTP_WINDOW; step++) {
    const candidate = await hotp(secret, step);
    const equal = crypto.subtle.timingSafeEqual(utf8.encode(candidate), utf8.encode(code));
    if (equal && (lastStep === null || step > lastStep) && found === null) found = step;
  }
  return found;
}

/**
 * The `otpauth://totp/` URI an authenticator app reads from a QR code (the Key Uri Format of Google
 * Authenticator, which the others follow): the issuer, the person's email, the secret and the parameters.
 */
export function otpauthUri(issuer: string, email: string, secret: Uint8Array): string {
  const label = `${encodeURIComponent(issuer)}:${encodeURIComponent(email)}`;
  const query = new URLSearchParams({
    secret: base32Encode(secret),
    issuer,
    algorithm: "SHA1",
    digits: String(TOTP_DIGITS),
    period: String(TOTP_STEP_SECONDS),
  });
  return `otpauth://totp/${label}?${query.toString().replaceAll("+", "%20")}`;
}
