/**
 * The two WebAuthn ceremonies, on @simplewebauthn/server: registering a
 * passkey for a signed-in person and signing in with one (WebAuthn Level 3
 * §7.1 and §7.2). Every passkey must be discoverable (a "resident key", so a
 * person signs in without typing an email) and must verify its user (PIN or
 * biometrics), which makes it two factors by itself. Attestation is not asked
 * for: the service trusts no particular make of authenticator, so it has no
 * use for a statement of which one made the key.
 */
import { base64urlDecode, base64urlEncode, utf8 } from "../core/crypto";
import { CHALLENGE_TTL_MS } from "./passkeys-challenges";
import { userHandleOf, type RelyingParty } from "./passkeys-relying-party";
import { MIN_CREDENTIAL_ID_LENGTH, type AuthenticationResponse, type RegistrationResponse } from "./passkeys-schemas";
import type { Passkey } from "./passkeys-store";

/**
 * The WebAuthn library, loaded by the first ceremony an isolate runs: with the ASN.1 and X.509 code it
 * brings (about 360 KiB, docs/people-and-roles.md "Passkeys"), it would otherwise be evaluated at every
 * isolate's start, for every request of the API.
 */
const webauthn = () => import("@simplewebauthn/server");

/** COSE algorithms (RFC 9053): Ed25519, ECDSA P-256 with SHA-256, RSA PKCS#1 v1.5 with SHA-256. */
const ALGORITHMS = [-8, -7, -257];

/** Transports the browser may be told to try again (WebAuthn Level 3 §5.8.4). */
const TRANSPORTS = new Set(["ble", "cable", "hybrid", "internal", "nfc", "smart-card", "usb"]);

/** A ceremony's answer that is not accepted; its message says why, for the log and, at registration, the person. */
export class CeremonyFailed extends Error {
  override name = "CeremonyFailed";
}

/** Runs one of the library's checks; what it throws (a malformed or forged answer) as CeremonyFailed. */
async function checked<T>(check: () => Promise<T>): Promise<T> {
  try {
    return await check();
  } catch (error) {
    throw new CeremonyFailed(error instanceof Error ? error.message : String(error));
  }
}

/** Bytes of base64url this service wrote itself (a challenge, a stored public key). */
const bytesOf = (text: string) => new Uint8Array(base64urlDecode(text) ?? []);

/** The challenge an answer signed, as its clientDataJSON reports it; null if it reports none. */
export function challengeOf(clientDataJSON: string): string | null {
  const bytes = base64urlDecode(clientDataJSON);
  if (bytes === null) return null;
  try {
    const { challenge } = JSON.parse(utf8.decode(bytes)) as { challenge?: unknown };
    return typeof challenge === "string" ? challenge : null;
  } catch {
    return null;
  }
}

/** The options for `navigator.credentials.create()`: a new discoverable passkey for `person`. */
export async function creationOptions(
  rp: RelyingParty,
  person: { id: number; email: string; name: string },
  existing: readonly Passkey[],
  challenge: string,
) {
  const { generateRegistrationOptions } = await webauthn();
  return generateRegistrationOptions({
    rpName: rp.name,
    rpID: rp.id,
    userName: person.email,
    userID: userHandleOf(person.id),
    userDisplayName: person.name,
    challenge: bytesOf(challenge),
    timeout: CHALLENGE_TTL_MS,
    attestationType: "none",
    // The browser refuses to make a second passkey on an authenticator that holds one already.
    excludeCredentials: existing.map((passkey) => ({ id: passkey.id, transports: passkey.transports ?? undefined })),
    authenticatorSelection: { residentKey: "required", userVerification: "required" },
    supportedAlgorithmIDs: ALGORITHMS,
  });
}

/** The options for `navigator.credentials.get()`: any passkey of this service, the user verified. */
export async function requestOptions(rp: RelyingParty, challenge: string) {
  const { generateAuthenticationOptions } = await webauthn();
  return generateAuthenticationOptions({
    rpID: rp.id,
    challenge: bytesOf(challenge),
    timeout: CHALLENGE_TTL_MS,
    userVerification: "required",
    allowCredentials: [],
  });
}

/** Checks a registration answer to `challenge`; the new passkey's key, counter and transports. */
export async function verifyRegistration(rp: RelyingParty, response: RegistrationResponse, challenge: string) {
  const { verifyRegistrationResponse } = await webauthn();
  const result = await checked(() =>
    verifyRegistrationResponse({
      response,
      expectedChallenge: challenge,
      expectedOrigin: rp.origin,
      expectedRPID: rp.id,
      requireUserVerification: true,
      supportedAlgorithmIDs: ALGORITHMS,
    }),
  );
  if (!result.verified) throw new CeremonyFailed("The attestation does not verify.");
  const { credential } = result.registrationInfo;
  if (credential.id.length < MIN_CREDENTIAL_ID_LENGTH) {
    throw new CeremonyFailed("Its credential id is shorter than the 16 bytes every authenticator's has.");
  }
  return {
    id: credential.id,
    publicKey: base64urlEncode(credential.publicKey),
    counter: credential.counter,
    transports: (response.response.transports ?? []).filter((transport) => TRANSPORTS.has(transport)),
  };
}

/**
 * Checks a sign-in answer to `challenge` with `passkey`: the signature, the origin and RP ID, user
 * verification, that the answer's user handle is the passkey's person's, and that the signature counter
 * grew (or is 0 for an authenticator that counts nothing, as synced passkeys do). Its new counter.
 */
export async function verifySignIn(
  rp: RelyingParty,
  response: AuthenticationResponse,
  challenge: string,
  passkey: Passkey,
): Promise<number> {
  const handle = response.response.userHandle;
  if (handle !== undefined && handle !== base64urlEncode(userHandleOf(passkey.person_id))) {
    throw new CeremonyFailed("The passkey's user handle is not its person's.");
  }
  const { verifyAuthenticationResponse } = await webauthn();
  const result = await checked(() =>
    verifyAuthenticationResponse({
      response,
      expectedChallenge: challenge,
      expectedOrigin: rp.origin,
      expectedRPID: rp.id,
      credential: {
        id: passkey.id,
        publicKey: bytesOf(passkey.public_key),
        counter: passkey.counter,
        transports: passkey.transports ?? undefined,
      },
      requireUserVerification: true,
    }),
  );
  if (!result.verified) throw new CeremonyFailed("The signature does not verify.");
  return result.authenticationInfo.newCounter;
}
