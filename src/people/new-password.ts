/**
 * A password given when a person is made by accepting an invitation, and how
 * it is stored: PBKDF2-HMAC-SHA256 (OWASP Password Storage Cheat Sheet) at
 * 100,000 iterations, the most Web Crypto in workerd computes (OWASP asks
 * 600,000), a 16-byte random salt, stored as
 * `pbkdf2-sha256$<iterations>$<salt>$<hash>` (base64url). Length 12 to 128
 * characters and no composition rules, as NIST SP 800-63B §3.1.1.2 asks.
 */
import * as z from "zod";
import { base64urlEncode, utf8 } from "../core/crypto";

export const MIN_PASSWORD_LENGTH = 12;
export const MAX_PASSWORD_LENGTH = 128;
export const PASSWORD_ITERATIONS = 100_000;

/** Characters as people count them (code points), not UTF-16 units. */
const length = (text: string) => [...text].length;

export const newPassword = z
  .string()
  .refine((text) => length(text) >= MIN_PASSWORD_LENGTH, `must be at least ${MIN_PASSWORD_LENGTH} characters`)
  .refine((text) => length(text) <= MAX_PASSWORD_LENGTH, `must be at most ${MAX_PASSWORD_LENGTH} characters`)
  .meta({
    description: `${MIN_PASSWORD_LENGTH} to ${MAX_PASSWORD_LENGTH} characters, any you like`,
    example: "correct horse battery staple",
  });

/** The stored form of `password`. */
export async function hashPassword(password: string): Promise<string> {
  const salt = crypto.getRandomValues(new Uint8Array(16));
  const material = await crypto.subtle.importKey("raw", utf8.encode(password.normalize("NFC")), "PBKDF2", false, [
    "deriveBits",
  ]);
  const bits = await crypto.subtle.deriveBits(
    { name: "PBKDF2", hash: "SHA-256", salt, iterations: PASSWORD_ITERATIONS },
    material,
    256,
  );
  return `pbkdf2-sha256$${PASSWORD_ITERATIONS}$${base64urlEncode(salt)}$${base64urlEncode(new Uint8Array(bits))}`;
}
