/**
 * People's email addresses and display names. An address is kept as it was
 * given (trimmed, in Unicode NFC) and found by its key, NFC and lower-cased,
 * so one address is one person whatever its case: RFC 5321 lets a mail server
 * tell `Ana@` from `ana@`, but none in common use does, and two people who
 * differ only by case are far likelier one person's typo.
 */
import * as z from "zod";

/** The longest address SMTP can deliver to (RFC 5321 §4.5.3.1.3: a 256-octet path less its brackets). */
export const MAX_EMAIL_LENGTH = 254;
export const MAX_PERSON_NAME_LENGTH = 100;

/** The address as kept: trimmed, NFC. */
export const normalEmail = (email: string) => email.normalize("NFC").trim();

/** What makes an address unique and what sign-in looks up (`people.email_key`). */
export const emailKey = (email: string) => normalEmail(email).toLowerCase();

/** An email address: one `@` between a local part and a domain, no white space. */
export const emailField = z
  .string()
  .transform(normalEmail)
  .pipe(
    z
      .string()
      .max(MAX_EMAIL_LENGTH, `must be at most ${MAX_EMAIL_LENGTH} characters`)
      .regex(/^[^\s@]+@[^\s@.][^\s@]*$/, "must be an email address, such as ana@example.com"),
  )
  .meta({ description: "An email address; its case does not matter", example: "ana@example.com" });

/**
 * A display name: trimmed, 1 to 100 characters, no control characters (a name is shown in lists and in
 * `created_by`, where a line break or an escape would garble it). Lone surrogates become U+FFFD.
 */
export const personName = z
  .string()
  .trim()
  .min(1, "must not be empty")
  .max(MAX_PERSON_NAME_LENGTH, `must be at most ${MAX_PERSON_NAME_LENGTH} characters`)
  .refine((name) => !/\p{Cc}/u.test(name), "must not contain control characters (line breaks, tabs)")
  .transform((name) => name.toWellFormed())
  .meta({ description: "The name shown to others", example: "Ana Lima" });
