/**
 * Email addresses of people and invitations. An address is stored as given and
 * matched by its key, the lower-cased NFC form (`people.email_key`,
 * `invitations.email_key`), so `Ada@Example.org` and `ada@example.org` are one
 * address.
 */
import * as z from "zod";

/** RFC 5321 §4.5.3.1.3: a path holds at most 256 octets, so an address at most 254 characters. */
export const MAX_EMAIL_LENGTH = 254;

export const emailKey = (email: string) => email.normalize("NFC").toLowerCase();

/** An email address in a request: trimmed, of the usual `local@domain` shape. */
export const emailField = z
  .string()
  .trim()
  .max(MAX_EMAIL_LENGTH, `must be at most ${MAX_EMAIL_LENGTH} characters`)
  .pipe(z.email("must be an email address"))
  .meta({ description: "An email address; matched whatever its case", example: "ada@example.org" });
