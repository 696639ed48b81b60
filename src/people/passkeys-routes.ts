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
import { createMiddleware } from "hono/factory";
import { clock } from "../core/clock";
import type { AppEnv } from "../core/env";
import { ApiError } from "../core/problem";
import { limitTokenAttempt, passkeySignInRatePolicy } from "../http/middleware/rate-limit";
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
import { requireSession, startSession } from "./sessions";

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
    errors: [401, 403],
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
    errors: [401, 403, 409],
  }),
  list: operation({
    summary: "List your passkeys",
    description: `${SESSION}. All of them, oldest first.`,
    operationId: "listPasskeys",
    tags: ["people"],
    responses: { 200: passkeyListJson },
    errors: [401],
  }),
  rename: operation<typeof PASSKEY_PATH>({
    summary: "Rename a passkey",
    description: `${SESSION_WRITE}.`,
    operationId: "renamePasskey",
    tags: ["people"],
    pathParams: { id: { description: "The passkey's credential id", example: "Vb2PMEXvXkqZ1Q3nYw-6ZA" } },
    examples: { "application/json": { name: "Phone" } },
    responses: { 200: passkeyJson },
    errors: [401, 403],
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
    errors: [401, 403, 409],
  }),
  signInOptions: operation({
    summary: "Start signing in with a passkey",
    description:
      "The options for `navigator.credentials.get()`: no email needed, the browser offers the passkeys it " +
      "has for this service. Its challenge is good for one answer, within 5 minutes.",
    operationId: "passkeySignInOptions",
    tags: ["people"],
    responses: { 200: requestOptionsJson },
    errors: [429],
  }),
  signIn: operation({
    summary: "Sign in with a passkey",
    description:
      "The browser's answer to the sign-in options (`PublicKeyCredential.toJSON()`), from this service's own " +
      "pages. On success the session cookie is set (a passkey with user verification is two factors by " +
      "itself); GET /v3.0/auth/session then gives its CSRF token. Any failure answers 400 " +
      "`invalid_credentials`, the same whatever failed.",
    operationId: "signInWithPasskey",
    tags: ["people"],
    examples: { "application/json": { response: answerExamples.signIn } },
    responses: { 204: { description: "Signed in: the response sets the session cookie" } },
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

/** Refuses a sign-in another site's page sent (./csrf.ts): it could sign a visitor in as someone else. */
const fromOwnPages = createMiddleware<AppEnv>(async function fromOwnPages(c, next) {
  assertSameOrigin(c);
  await next();
});

/** Counts a sign-in attempt against its source address, before any work is done for it. */
const limitSignIn = async (c: Context<AppEnv>, next: () => Promise<void>) => {
  await limitTokenAttempt(c);
  await next();
};

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

/** Checks a sign-in answer and opens a session for the passkey's person (it sets the cookie). */
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
  await startSession(c, passkey.person_id, "none");
}

/** Mounted under /v3.0/auth, whose body rules apply (./session-routes.ts). */
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
    ...operations.signInOptions(passkeySignInRatePolicy(), limitSignIn, async (c) => {
      const challenge = await issueChallenge(c.env.DB, { kind: "sign-in" }, clock.now());
      c.header("Cache-Control", "no-store");
      return c.json(await requestOptions(relyingParty(c), challenge));
    }),
  )
  .post(
    "/sign-in",
    ...operations.signIn(
      passkeySignInRatePolicy(),
      fromOwnPages,
      limitSignIn,
      validate("json", passkeySignIn),
      async (c) => {
        await signIn(c, c.req.valid("json").response);
        c.header("Cache-Control", "no-store");
        return c.body(null, 204);
      },
    ),
  );
