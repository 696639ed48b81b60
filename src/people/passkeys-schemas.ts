/**
 * Request and response shapes of passkeys: the `passkeys` table's public
 * columns, and the browser's WebAuthn answers in their JSON form (WebAuthn
 * Level 3 §5.1, `RegistrationResponseJSON` and `AuthenticationResponseJSON`,
 * what `PublicKeyCredential.toJSON()` and @simplewebauthn/browser give).
 * Binary values travel as base64url; the lengths are WebAuthn's own bounds
 * (a credential id is 16 to 1,023 bytes, a user handle at most 64) or well past
 * any authenticator's answer.
 */
import { createSelectSchema } from "drizzle-zod";
import * as z from "zod";
import { passkeys } from "../db/schema";
import * as field from "../fields/schemas";

const base64url = (maxLength: number) =>
  z
    .string()
    .max(maxLength, `must be at most ${maxLength} characters`)
    .regex(/^[A-Za-z0-9_-]*$/, "must be base64url (A-Z, a-z, 0-9, - and _, no padding)");

/**
 * 16 to 1,023 bytes in base64url: authenticators make ids of at least 16 bytes (WebAuthn Level 3 §4,
 * "Credential ID"), and §7.1 refuses longer ones.
 */
export const MIN_CREDENTIAL_ID_LENGTH = 22;
const credentialId = base64url(1364).min(MIN_CREDENTIAL_ID_LENGTH, "must be at least 16 bytes");

/** What the browser adds beside the authenticator's answer; only what we read of it is described. */
const credentialFields = {
  id: credentialId,
  rawId: credentialId,
  type: z.literal("public-key"),
  authenticatorAttachment: z.enum(["platform", "cross-platform"]).optional(),
  clientExtensionResults: z.object({}).loose().default({}),
};

export const registrationResponse = z
  .object({
    ...credentialFields,
    response: z.object({
      clientDataJSON: base64url(8192),
      attestationObject: base64url(48 * 1024),
      transports: z.array(z.string().max(32)).max(16).optional(),
    }),
  })
  .meta({
    id: "PasskeyRegistrationResponse",
    description: "The browser's answer to the creation options: `PublicKeyCredential.toJSON()`",
  });

export const authenticationResponse = z
  .object({
    ...credentialFields,
    response: z.object({
      clientDataJSON: base64url(8192),
      authenticatorData: base64url(8192),
      signature: base64url(2048),
      userHandle: base64url(86).optional(),
    }),
  })
  .meta({
    id: "PasskeyAuthenticationResponse",
    description: "The browser's answer to the sign-in options: `PublicKeyCredential.toJSON()`",
  });

export type RegistrationResponse = z.output<typeof registrationResponse>;
export type AuthenticationResponse = z.output<typeof authenticationResponse>;

/**
 * What a browser on https://api.example.com sends, for the reference: a real ES256 passkey's answers to one
 * challenge, which a service only accepts once, right after it issued that challenge.
 */
export const answerExamples = {
  registration: {
    id: "Vb2PMEXvXkqZ1Q3nYw-6ZA",
    rawId: "Vb2PMEXvXkqZ1Q3nYw-6ZA",
    type: "public-key",
    authenticatorAttachment: "platform",
    clientExtensionResults: { credProps: { rk: true } },
    response: {
      clientDataJSON:
        "eyJ0eXBlIjoid2ViYXV0aG4uY3JlYXRlIiwiY2hhbGxlbmdlIjoiUEJlWWYzUDlDOHhOblAxSm01ZzNSa1EwZExyNHc1dTdWeDJBeTZC" +
        "ejhDdyIsIm9yaWdpbiI6Imh0dHBzOi8vYXBpLmV4YW1wbGUuY29tIiwiY3Jvc3NPcmlnaW4iOmZhbHNlfQ",
      attestationObject:
        "o2NmbXRkbm9uZWdhdHRTdG10oGhhdXRoRGF0YViU0MQ9OIUGTZrrRwIUqRSkO67EDh1m29RjdRNrasFdLmNFAAAAAAAAAAAAAAAAAAAA" +
        "AAAAAAAAEFW9jzBF715KmdUN52MPumSlAQIDJiABIVgg1DcAd_o4bh0sCp-jWBUJn3cVrZ2PKairazPUTU09yYoiWCB1ab1N3kq34Dgi" +
        "FP3-Bajzf_Jnf1PL0ipLT4rSCBITAg",
      transports: ["internal", "hybrid"],
    },
  },
  signIn: {
    id: "Vb2PMEXvXkqZ1Q3nYw-6ZA",
    rawId: "Vb2PMEXvXkqZ1Q3nYw-6ZA",
    type: "public-key",
    authenticatorAttachment: "platform",
    clientExtensionResults: {},
    response: {
      clientDataJSON:
        "eyJ0eXBlIjoid2ViYXV0aG4uZ2V0IiwiY2hhbGxlbmdlIjoiUEJlWWYzUDlDOHhOblAxSm01ZzNSa1EwZExyNHc1dTdWeDJBeTZCejhD" +
        "dyIsIm9yaWdpbiI6Imh0dHBzOi8vYXBpLmV4YW1wbGUuY29tIiwiY3Jvc3NPcmlnaW4iOmZhbHNlfQ",
      authenticatorData: "0MQ9OIUGTZrrRwIUqRSkO67EDh1m29RjdRNrasFdLmMFAAAAAQ",
      signature: "MEUCIHAdqGml5djuRnlsxadSlJJZcWRhjf5QXWe9UA5wWMzHAiEA4ec-Z5J143S8xShu7cSzEg0iSqlWF_Nr5yRt6DC4_80",
      userHandle: "cGVyc29uOjE",
    },
  },
};

/** POST /v3.0/auth/passkeys. */
export const passkeyCreate = z
  .object({
    name: field.name.default("Passkey").meta({ description: "What you call it (`Laptop`, `Security key`)" }),
    response: registrationResponse,
  })
  .meta({ id: "PasskeyCreate" });

/** PATCH /v3.0/auth/passkeys/{id}. */
export const passkeyUpdate = z.object({ name: field.name }).meta({ id: "PasskeyUpdate" });

/** POST /v3.0/auth/passkeys/sign-in. */
export const passkeySignIn = z.object({ response: authenticationResponse }).meta({ id: "PasskeySignIn" });

/** A passkey as its person sees it: never its public key or counter. */
export const passkeyJson = createSelectSchema(passkeys)
  .pick({ id: true, name: true })
  .extend({
    id: z.string().meta({ description: "The credential id, base64url", example: "Vb2PMEXvXkqZ1Q3nYw-6ZA" }),
    transports: z
      .array(z.string())
      .meta({ description: "How the browser reaches its authenticator (`internal`, `hybrid`, `usb`...)" }),
    created_at: z.iso.datetime(),
    last_used_at: z.iso.datetime().nullable().meta({ description: "The last sign-in with it; null: never" }),
  })
  .meta({ id: "Passkey" });
export type PasskeyJson = z.output<typeof passkeyJson>;

export const passkeyListJson = z
  .object({
    results: z.array(passkeyJson),
    next: z.null().meta({ description: "Always null: a person's passkeys fit on one page" }),
    previous: z.null(),
  })
  .meta({ id: "PasskeyList" });

/**
 * The creation options, `PublicKeyCredentialCreationOptionsJSON` (WebAuthn Level 3 §5.4), for
 * `PublicKeyCredential.parseCreationOptionsFromJSON()` or @simplewebauthn/browser's `startRegistration`.
 */
export const creationOptionsJson = z
  .object({
    challenge: z.string(),
    rp: z.object({ id: z.string(), name: z.string() }),
    user: z.object({ id: z.string(), name: z.string(), displayName: z.string() }),
    pubKeyCredParams: z.array(z.object({ type: z.literal("public-key"), alg: z.int() })),
    timeout: z.int(),
    excludeCredentials: z.array(z.object({ id: z.string(), type: z.literal("public-key") }).loose()),
    authenticatorSelection: z
      .object({ residentKey: z.literal("required"), userVerification: z.literal("required") })
      .loose(),
    attestation: z.literal("none"),
  })
  .loose()
  .meta({ id: "PasskeyCreationOptions" });

/** The request options, `PublicKeyCredentialRequestOptionsJSON` (WebAuthn Level 3 §5.5), with no credential named. */
export const requestOptionsJson = z
  .object({
    challenge: z.string(),
    rpId: z.string(),
    timeout: z.int(),
    userVerification: z.literal("required"),
    allowCredentials: z
      .array(z.object({ id: z.string(), type: z.literal("public-key") }).loose())
      .meta({ description: "Empty: the browser offers the passkeys it has for this service" }),
  })
  .loose()
  .meta({ id: "PasskeyRequestOptions" });
