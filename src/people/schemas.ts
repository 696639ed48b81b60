/** Request and response shapes of signing in, sessions, passwords, TOTP and /v3.0/me. */
import * as z from "zod";
import * as field from "../fields/schemas";
import { emailField, personName } from "./email";
import { MAX_PASSWORD_LENGTH } from "./password-policy";

/**
 * A password as sent to be checked: any text up to a bound, so no attempt hashes megabytes. Whether a new
 * password is acceptable is ./password-policy.ts's question, asked where one is set.
 */
const password = (description: string) =>
  z
    .string()
    .min(1, "must not be empty")
    .max(4 * MAX_PASSWORD_LENGTH, `must be at most ${4 * MAX_PASSWORD_LENGTH} characters`)
    .meta({ description });

/** A new password: any text here; ./password-policy.ts says, where one is set, whether it will do. */
export const newPassword = z.string().meta({
  description:
    "12 to 128 characters, no other rule: not one of the most common passwords, not one character " +
    "repeated, not your email address",
  example: "a long phrase only you know",
});

const code = z.string().max(64, "must be at most 64 characters");

export const signInBody = z
  .object({
    email: emailField,
    password: password("Your password"),
  })
  .meta({ id: "SignIn" });

export const secondFactorBody = z
  .object({
    code: code.optional().meta({ description: "The 6-digit code your authenticator app shows now" }),
    recovery_code: code.optional().meta({ description: "One of your recovery codes, instead of `code`" }),
  })
  .refine((body) => (body.code === undefined) !== (body.recovery_code === undefined), {
    message: "send either code or recovery_code",
  })
  .meta({ id: "SecondFactor" });

export const tokenBody = z
  .object({
    account: field.id.optional().meta({
      description:
        "The account to act in (GET /v3.0/auth/session lists yours); absent, the session's, or your only one",
    }),
  })
  .meta({ id: "PersonTokenRequest" });

export const passwordChangeBody = z
  .object({
    current_password: password("Your password now; leave it out only when you have none (passkeys only)").optional(),
    new_password: newPassword,
  })
  .meta({ id: "PasswordChange" });

export const passwordResetBody = z.object({ password: newPassword }).meta({ id: "PasswordReset" });

export const totpConfirmBody = z
  .object({ code: code.meta({ description: "The 6-digit code your authenticator app shows for the new secret" }) })
  .meta({ id: "TotpConfirm" });

export const totpOffBody = z
  .object({
    code: code.optional().meta({ description: "The code your authenticator app shows now" }),
    password: password("Your password, instead of `code`").optional(),
  })
  .refine((body) => body.code !== undefined || body.password !== undefined, {
    message: "send code or password",
  })
  .meta({ id: "TotpOff" });

export const meUpdate = z.object({ name: personName }).meta({ id: "PersonUpdate" });

const role = z.enum(["owner", "admin", "editor", "contributor", "viewer"]);

export const personJson = z
  .object({ id: z.int(), email: z.string(), name: z.string() })
  .meta({ id: "Person", description: "A person, as others see them" });

export const accountOfPersonJson = z
  .object({
    id: z.int(),
    name: z.string(),
    role: role.nullable().meta({ description: "Your role in the account; null: you collaborate on some of its lists" }),
  })
  .meta({ id: "AccountOfPerson" });

export const sessionItemJson = z
  .object({
    id: z
      .string()
      .meta({ description: "The session's id (not its cookie): what DELETE /v3.0/auth/sessions/{id} takes" }),
    current: z.boolean().meta({ description: "Whether this is the session of the request" }),
    second_factor: z.enum(["none", "pending", "done"]).meta({
      description:
        "`pending` between the password and the TOTP code; `done` once passed; `none`: no code was asked (TOTP " +
        "is off, or a passkey signed in, two factors by itself)",
    }),
    account: z.int().nullable().meta({ description: "The account it acts in; null until one is chosen" }),
    user_agent: z.string().nullable(),
    created_at: z.iso.datetime().meta({ description: "When the person signed in" }),
    last_seen_at: z.iso.datetime(),
    expires_at: z.iso.datetime().meta({ description: "When it ends unless used before (idle, or absolute)" }),
  })
  .meta({ id: "Session" });

export const sessionJson = z
  .object({
    person: personJson.nullable().meta({ description: "Null while the second factor is pending" }),
    session: sessionItemJson,
    csrf_token: z.string().meta({
      description: "Send it as `X-CSRF-Token` with every write made with the session cookie; each session has its own",
    }),
    accounts: z.array(accountOfPersonJson).meta({ description: "The accounts you act in; empty while pending" }),
  })
  .meta({ id: "SignedInSession" });

export const sessionsJson = z
  .object({
    sessions: z
      .array(sessionItemJson)
      .meta({ description: "Your open sessions, most recently used first (at most 100)" }),
  })
  .meta({ id: "Sessions" });

export const personTokenJson = z
  .object({
    access_token: z.string(),
    token_type: z.literal("Bearer"),
    expires_in: z.int().meta({ description: "Seconds; mint a new one from the session before then" }),
    scope: z.string().meta({ description: "`read write`, or `read` for a viewer", example: "read write" }),
    account: z.int().meta({ description: "The account the token acts in" }),
    csrf_token: z.string().meta({ description: "The session's CSRF token: a new one when the account changed" }),
  })
  .meta({ id: "PersonToken" });

export const totpBeginJson = z
  .object({
    secret: z.string().meta({ description: "The secret, base32, for typing into an authenticator app" }),
    otpauth_uri: z.string().meta({
      description: "The same as an `otpauth://totp/` URI, for a QR code",
      example: "otpauth://totp/api.example.com:ana%40example.com?secret=JBSWY3DPEHPK3PXP&issuer=api.example.com",
    }),
  })
  .meta({ id: "TotpSecret" });

export const totpConfirmedJson = sessionJson
  .extend({
    recovery_codes: z.array(z.string()).meta({
      description: "10 single-use codes that stand in for the authenticator: shown only now",
      example: ["k7q2m-x9fha", "p3s5d-2wbce"],
    }),
  })
  .meta({ id: "TotpConfirmed" });

export const meJson = z
  .object({
    id: z.int(),
    email: z.string(),
    name: z.string(),
    created_at: z.iso.datetime(),
    password: z.boolean().meta({ description: "Whether you have a password" }),
    totp: z.boolean().meta({ description: "Whether the TOTP second factor is on" }),
    passkeys: z.int().meta({ description: "How many passkeys you have" }),
    accounts: z.array(accountOfPersonJson),
    collaborations: z
      .array(
        z.object({
          account: z.int(),
          list: z.int(),
          role: z.enum(["editor", "viewer"]),
        }),
      )
      .meta({ description: "The lists you were given without being a member of their account" }),
  })
  .meta({ id: "Me" });
