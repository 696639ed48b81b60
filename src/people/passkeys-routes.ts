/**
 * /v3.0/auth/passkeys: a signed-in person registers, lists, renames and
 * deletes their passkeys (with the session cookie and its CSRF token), and
 * anyone signs in with one (docs/people-and-roles.md, "Passkeys"). Each
 * ceremony is two requests: options with a fresh challenge, then the
 * browser's answer to it (./passkeys-ceremonies.ts).
 *
 * A sign-in that fails answers the same whatever failed (a passkey this
 * service does not know, another's signature, a used challenge, a counter
 * gone backwards), so an answer tells nobody which passkeys exist; the
 * reason goes to the log.
 */
import { Hono, type Context } from "hono";
import { clock } from "../core/clock";
import type { AppEnv } from "../core/env";
import { ApiError } from "../core/problem";
import { limitSignInAttempt, signInRatePolicy } from "../http/middleware/rate-limit";
import { created } from "../http/responses";
import { operation } from "../http/route-metadata";
import { validate } from "../http/validation";
import {
  CeremonyFailed,
  challengeOf,
  creationOptions,
  requestOptions,
  verifyRegistration,
  verifySignIn,
} from "./passkeys-ceremonies";
import { issueChallenge, useChallenge, type Ceremony } from "./passkeys-challenges";
import { passkeyToJson } from "./passkeys-json";
import { relyingParty } from "./passkeys-relying-party";
import {
  answerExamples,
  type AuthenticationResponse,
  creationOptionsJson,
  passkeyCreate,
  passkeyJson,
  passkeyListJson,
  passkeySignIn,
  passkeyUpdate,
  type RegistrationResponse,
  requestOptionsJson,
} from "./passkeys-schemas";
import {
  deletePasskey,
  insertPasskey,
  MAX_PASSKEYS,
  passkeyById,
  passkeyOfRow,
  recordSignIn,
  registrant,
  renamePasskey,
  type Passkey,
} from "./passkeys-store";
import { assertSameOrigin } from "./csrf";
import { rememberDevice } from "./devices";
import { sessionToJson } from "./json";
import { sessionJson } from "./schemas";
import { requireSession, startSession } from "./sessions";
import { personById } from "./store";

/**
 * A credential id in a path: base64url of 16 to 1,023 bytes (./passkeys-schemas.ts), so neither `sign-in`
 * nor `registration` is one.
 */
const PASSKEY_PATH = "/:id{[A-Za-z0-9_-]{22,1364}}";

const SESSION = "With the session cookie";
const SESSION_WRITE = "With the session cookie and its `X-CSRF-Token` (GET /v3.0/auth/session)";

const operations = {
  registrationOptions: operation({
    summary: "Start registering a passkey",
    description:
      `${SESSION_WRITE}. The options for \`navigator.credentials.create()\` (after ` +
      "`PublicKeyCredential.parseCreationOptionsFromJSON()`, or @simplewebauthn/browser's `startRegistration`): " +
      "a discoverable passkey with user verification, for this service's RP ID, excluding the passkeys you " +
      "have. Its challenge is good for one answer, within 5 minutes, from this session.",
    operationId: "passkeyRegistrationOptions",
    tags: ["people"],
    responses: { 200: creationOptionsJson },
  }),
  register: operation({
    summary: "Register a passkey",
    description:
      `${SESSION_WRITE}. The browser's answer to the registration options (\`PublicKeyCredential.toJSON()\`) ` +
      "and a name for the passkey. Refused (400 `passkey_not_accepted`, the reason in `detail`) when its " +
      "challenge is not one this session was given, or was used or has expired, when it was made for another " +
      "origin or RP ID, or without user verification. 409 when the passkey is registered already, or you " +
      `have ${MAX_PASSKEYS}.`,
    operationId: "registerPasskey",
    tags: ["people"],
    examples: { "application/json": { name: "Laptop", response: answerExamples.registration } },
    responses: { 201: passkeyJson },
    errors: [409],
  }),
  list: operation({
    summary: "List your passkeys",
    description: `${SESSION}. All of them, oldest first.`,
    operationId: "listPasskeys",
    tags: ["people"],
    responses: { 200: passkeyListJson },
  }),
  rename: operation<typeof PASSKEY_PATH>({
    summary: "Rename a passkey",
    description: `${SESSION_WRITE}.`,
    operationId: "renamePasskey",
    tags: ["people"],
    pathParams: { id: { description: "The passkey's credential id", example: "Vb2PMEXvXkqZ1Q3nYw-6ZA" } },
    examples: { "application/json": { name: "Phone" } },
    responses: { 200: passkeyJson },
  }),
  delete: operation<typeof PASSKEY_PATH>({
    summary: "Delete a passkey",
    description:
      `${SESSION_WRITE}. It no longer signs you in here (the authenticator keeps it until you delete it ` +
      "there too). Refused (409 `last_credential`) for your only passkey when you have no password.",
    operationId: "deletePasskey",
    tags: ["people"],
    pathParams: { id: { description: "The passkey's credential id", example: "Vb2PMEXvXkqZ1Q3nYw-6ZA" } },
    responses: { 204: { description: "Deleted" } },
    errors: [409],
  }),
  signInOptions: operation({
    summary: "Start signing in with a passkey",
    description:
      "The options for `navigator.credentials.get()`: no email needed, the browser offers the passkeys it " +
      "has for this service. Its challenge is good for one answer, within 5 minutes. Counted as a sign-in " +
      "attempt from its address, as the answer is.",
    operationId: "passkeySignInOptions",
    tags: ["people"],
    responses: { 200: requestOptionsJson },
    errors: [429],
  }),
  signIn: operation({
    summary: "Sign in with a passkey",
    description:
      "The browser's answer to the sign-in options (`PublicKeyCredential.toJSON()`), from this service's own " +
      "pages. Starts a session as POST /v3.0/auth/sign-in does: the answer sets its cookie and gives its " +
      "CSRF token. No TOTP code follows: a passkey with user verification is two factors by itself. Any " +
      "failure answers 400 `invalid_credentials`, the same whatever failed.",
    operationId: "signInWithPasskey",
    tags: ["people"],
    examples: { "application/json": { response: answerExamples.signIn } },
    responses: {
      200: { schema: sessionJson, headers: { "Set-Cookie": { description: "The session cookie (`HttpOnly`)" } } },
      400: { description: "`invalid_credentials`: the passkey was not accepted; or `validation_failed`" },
    },
    errors: [403, 429],
  }),
};

const notAccepted = (reason: string) => new ApiError("passkey_not_accepted", reason);

function signInFailed(c: Context<AppEnv>, reason: string): ApiError {
  console.log(
    JSON.stringify({ level: "info", message: "passkey sign-in refused", request_id: c.var.requestId, reason }),
  );
  return new ApiError("invalid_credentials", "The passkey was not accepted. Sign in again.");
}

/** Checks a registration answer to a challenge this session was given, and stores its passkey. */
async function register(c: Context<AppEnv>, name: string, response: RegistrationResponse): Promise<Passkey> {
  const { session } = c.var;
  const challenge = challengeOf(response.response.clientDataJSON);
  const ceremony: Ceremony = { kind: "registration", personId: session.personId, sessionId: session.id };
  const ticket = challenge && (await (await useChallenge(c.env.DB, challenge, ceremony, clock.now())).first());
  if (!challenge || !ticket) {
    throw notAccepted("Its challenge is not one this session was given, or was used or has expired: start again.");
  }
  let verified: Awaited<ReturnType<typeof verifyRegistration>>;
  try {
    verified = await verifyRegistration(relyingParty(c), response, challenge);
  } catch (error) {
    if (error instanceof CeremonyFailed) throw notAccepted(error.message);
    throw error;
  }
  return insertPasskey(c.env.DB, { ...verified, personId: session.personId, name });
}

/**
 * Checks a sign-in answer and signs the passkey's person in as a password sign-in does (./sessions.ts): a
 * new session and its cookie, with no second factor to wait for, and this browser remembered for their
 * email (./devices.ts).
 */
async function signIn(c: Context<AppEnv>, response: AuthenticationResponse): Promise<void> {
  const db = c.env.DB;
  const now = clock.now();
  const challenge = challengeOf(response.response.clientDataJSON);
  if (challenge === null) throw signInFailed(c, "no challenge in clientDataJSON");
  // One round trip: the challenge is used up whether or not the passkey is known.
  const [ticket, found] = await db.batch([
    await useChallenge(db, challenge, { kind: "sign-in" }, now),
    passkeyById(db, response.id),
  ]);
  if (!ticket!.results.length) throw signInFailed(c, "challenge unknown, used or expired");
  const row = found!.results[0] as Record<string, unknown> | undefined;
  if (!row) throw signInFailed(c, "unknown passkey");
  const passkey = passkeyOfRow(row);
  let counter: number;
  try {
    counter = await verifySignIn(relyingParty(c), response, challenge, passkey);
  } catch (error) {
    if (error instanceof CeremonyFailed) throw signInFailed(c, error.message);
    throw error;
  }
  if (!(await recordSignIn(db, passkey, counter, now))) throw signInFailed(c, "signature counter raced");
  // The passkey goes with its person (ON DELETE CASCADE), so its person exists.
  const person = (await personById(db, passkey.person_id))!;
  await startSession(c, person.id, "none");
  await rememberDevice(c, person.email_key);
}

/** Mounted under /v3.0/auth, whose body rules apply (./routes.ts). */
export const passkeyRoutes = new Hono<AppEnv>()
  .post(
    "/registration/options",
    ...operations.registrationOptions(requireSession(), async (c) => {
      const { session } = c.var;
      const { person, passkeys } = await registrant(c.env.DB, session.personId);
      const ceremony: Ceremony = { kind: "registration", personId: person.id, sessionId: session.id };
      const challenge = await issueChallenge(c.env.DB, ceremony, clock.now());
      c.header("Cache-Control", "no-store");
      return c.json(await creationOptions(relyingParty(c), person, passkeys, challenge));
    }),
  )
  .post(
    "/",
    ...operations.register(requireSession(), validate("json", passkeyCreate), async (c) => {
      const { name, response } = c.req.valid("json");
      const row = await register(c, name, response);
      return created(c, `/v3.0/auth/passkeys/${row.id}`, passkeyToJson(row));
    }),
  )
  .get(
    "/",
    ...operations.list(requireSession(), async (c) => {
      const { passkeys } = await registrant(c.env.DB, c.var.session.personId);
      c.header("Cache-Control", "no-store");
      return c.json({ results: passkeys.map(passkeyToJson), next: null, previous: null });
    }),
  )
  .patch(
    PASSKEY_PATH,
    ...operations.rename(requireSession(), validate("json", passkeyUpdate), async (c) => {
      const row = await renamePasskey(c.env.DB, c.var.session.personId, c.req.param("id"), c.req.valid("json").name);
      return c.json(passkeyToJson(row));
    }),
  )
  .delete(
    PASSKEY_PATH,
    ...operations.delete(requireSession(), async (c) => {
      await deletePasskey(c.env.DB, c.var.session.personId, c.req.param("id"));
      return c.body(null, 204);
    }),
  )
  .post(
    "/sign-in/options",
    signInRatePolicy(),
    ...operations.signInOptions(async (c) => {
      await limitSignInAttempt(c, null);
      const challenge = await issueChallenge(c.env.DB, { kind: "sign-in" }, clock.now());
      c.header("Cache-Control", "no-store");
      return c.json(await requestOptions(relyingParty(c), challenge));
    }),
  )
  .post(
    "/sign-in",
    signInRatePolicy(),
    ...operations.signIn(validate("json", passkeySignIn), async (c) => {
      // Another site's page could sign a visitor in as someone else (./csrf.ts).
      assertSameOrigin(c);
      // Before the answer is checked; a passkey names its person only in its answer, so only the address counts.
      await limitSignInAttempt(c, null);
      await signIn(c, c.req.valid("json").response);
      c.header("Cache-Control", "no-store");
      return c.json(await sessionToJson(c));
    }),
  );
