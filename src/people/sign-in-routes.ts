/**
 * /v3.0/auth: signing in with an email and password (and the TOTP second
 * factor, when it is on), the session, the person's sessions, signing out,
 * and the bearer token a signed-in browser calls the rest of the API with.
 * Every answer about an email and password is the same whether the email
 * exists or not (docs/people-and-roles.md, "Signing in").
 */
import { Hono, type Context } from "hono";
import { clock } from "../core/clock";
import type { AppEnv } from "../core/env";
import { ApiError } from "../core/problem";
import { signingKeys } from "../core/signing";
import { mintPersonToken } from "../auth/person-token";
import { personStanding, writesWith } from "../auth/person-status";
import { limitSignInAttempt, signInRatePolicy } from "../http/middleware/rate-limit";
import { operation } from "../http/route-metadata";
import { validate } from "../http/validation";
import { assertSameOrigin, csrfToken } from "./csrf";
import { rememberDevice, signInSubject } from "./devices";
import { emailKey } from "./email";
import { sessionItemToJson, sessionToJson, type SessionRow } from "./json";
import { hashPassword, verifyPassword } from "./passwords";
import { personTokenJson, secondFactorBody, sessionJson, sessionsJson, signInBody, tokenBody } from "./schemas";
import { acceptTotpCode, recordTotpCode, useRecoveryCode } from "./second-factor";
import { clearSessionCookie, endSession, requireSession, rotateSession, sessionPerson, startSession } from "./sessions";
import { accountsOf, personByEmailKey, type Person } from "./store";

/** The one answer to a wrong email or password, byte for byte whichever it was. */
const wrongEmailOrPassword = () => new ApiError("invalid_credentials", "The email or password is wrong.");

/** A session id as a path segment: a SHA-256, base64url. */
const SESSION_ID = ":sessionId{[A-Za-z0-9_-]{43}}";

const operations = {
  signIn: operation({
    summary: "Sign in with an email and password",
    description:
      "Starts a session: the answer sets its cookie and gives its CSRF token. When the person has TOTP on, " +
      "the session waits for the second factor (`second_factor: pending`) until POST " +
      "/v3.0/auth/second-factor. A wrong email and a wrong password get the same answer. Attempts are " +
      "limited per address and per email, but a browser that signed in with the email before is never held " +
      "back by anyone else's attempts.",
    operationId: "signIn",
    tags: ["people"],
    examples: { "application/json": { email: "ana@example.com", password: "a long phrase only you know" } },
    responses: {
      200: { schema: sessionJson, headers: { "Set-Cookie": { description: "The session cookie (`HttpOnly`)" } } },
      400: { description: "`invalid_credentials`: the email or password is wrong; or `validation_failed`" },
    },
    errors: [403, 429],
  }),
  secondFactor: operation({
    summary: "Complete a sign-in with the TOTP code or a recovery code",
    description:
      "For a session waiting for its second factor: a code from the authenticator app (each accepted once) " +
      "or one of the recovery codes (each good once). The session is replaced by a new one (new cookie and " +
      "CSRF token).",
    operationId: "passSecondFactor",
    tags: ["people"],
    examples: { "application/json": { code: "123456" } },
    responses: {
      200: sessionJson,
      400: { description: "`invalid_credentials`: the code does not match; or `validation_failed`" },
      409: { description: "`conflict`: this session is not waiting for a second factor" },
    },
    errors: [429],
  }),
  signOut: operation({
    summary: "Sign out",
    description: "Ends this browser's session and removes its cookie; its bearer tokens stop working at once.",
    operationId: "signOut",
    tags: ["people"],
    responses: { 204: { description: "Signed out" } },
  }),
  session: operation({
    summary: "The signed-in session",
    description: "Who is signed in, the accounts they act in, and the CSRF token writes with the cookie need.",
    operationId: "getSession",
    tags: ["people"],
    responses: { 200: sessionJson },
  }),
  sessions: operation({
    summary: "List your sessions",
    description: "Your open sessions on every browser, most recently used first.",
    operationId: "listSessions",
    tags: ["people"],
    responses: { 200: sessionsJson },
  }),
  revokeSession: operation({
    summary: "End one of your sessions",
    description: "Signs that browser out; its bearer tokens stop working at once.",
    operationId: "revokeSession",
    tags: ["people"],
    pathParams: {
      sessionId: {
        description: "The session's `id` from GET /v3.0/auth/sessions",
        example: "qX3h0Zk7TzN1bqJ9cQm4yV8sLw2pR6eUaD5fG0hJkLm",
      },
    },
    responses: { 204: { description: "Ended" } },
  }),
  signOutEverywhere: operation({
    summary: "Sign out everywhere",
    description: "Ends every session of yours, this one included.",
    operationId: "signOutEverywhere",
    tags: ["people"],
    responses: { 204: { description: "Signed out everywhere" } },
  }),
  token: operation({
    summary: "Get a bearer token from the session",
    description:
      "A short-lived access token for the account the session acts in, or for `account`, which switches the " +
      "session to it (a new session id and CSRF token). Send it as `Authorization: Bearer` to every other " +
      "operation; what it may do is your role's (docs/people-and-roles.md). It stops working when the " +
      "session ends or your role changes.",
    operationId: "createPersonToken",
    tags: ["people"],
    // The session's account, or the person's only one: what the app asks first (`account` switches).
    examples: { "application/json": {} },
    responses: {
      200: { schema: personTokenJson, headers: { "Cache-Control": { description: "`no-store`" } } },
    },
  }),
};

/** Whether `code` passes the person's TOTP, using it up. */
async function passTotp(c: Context<AppEnv>, person: Person, code: string): Promise<boolean> {
  if (person.totp_enabled_at === null || person.totp_secret === null) return false;
  const next = await acceptTotpCode(c.env, person.id, person.totp_secret, code);
  return next !== null && (await recordTotpCode(c.env.DB, person.id, person.totp_secret, next));
}

/** The account a token request acts in: the one named, the session's, or the person's only one. */
async function tokenAccount(c: Context<AppEnv>, named: number | undefined): Promise<number> {
  const chosen = named ?? c.var.session.accountId;
  if (chosen !== null) return chosen;
  const accounts = await accountsOf(c.env.DB, c.var.session.personId);
  if (accounts.length === 1) return accounts[0]!.id;
  throw new ApiError("validation_failed", "account: name the account to act in", {
    errors: [
      {
        pointer: "/account",
        detail:
          accounts.length === 0
            ? "you are in no account yet; ask an administrator for an invitation"
            : "you act in several accounts: name one (GET /v3.0/auth/session lists them)",
      },
    ],
  });
}

export const signInRoutes = new Hono<AppEnv>()
  .post(
    "/sign-in",
    signInRatePolicy(),
    ...operations.signIn(validate("json", signInBody), async (c) => {
      assertSameOrigin(c);
      const { email, password } = c.req.valid("json");
      const key = emailKey(email);
      await limitSignInAttempt(c, await signInSubject(c, key));
      const person = await personByEmailKey(c.env.DB, key);
      const { matches, rehash } = await verifyPassword(password, person?.password_hash ?? null);
      if (!person || !matches) throw wrongEmailOrPassword();
      if (rehash) {
        await c.env.DB.prepare("UPDATE people SET password_hash = ? WHERE id = ? AND password_hash = ?")
          .bind(await hashPassword(password), person.id, person.password_hash)
          .run();
      }
      const pending = person.totp_enabled_at !== null;
      await startSession(c, person.id, pending ? "pending" : "none");
      if (!pending) await rememberDevice(c, key);
      c.header("Cache-Control", "no-store");
      return c.json(await sessionToJson(c));
    }),
  )
  .post(
    "/second-factor",
    signInRatePolicy(),
    ...operations.secondFactor(
      requireSession({ allowPending: true }),
      validate("json", secondFactorBody),
      async (c) => {
        if (c.var.session.secondFactor !== "pending") {
          throw new ApiError("conflict", "This session is not waiting for a second factor.");
        }
        await limitSignInAttempt(c, `person:${c.var.session.personId}`);
        const person = await sessionPerson(c);
        const { code, recovery_code } = c.req.valid("json");
        const passed =
          code !== undefined
            ? await passTotp(c, person, code)
            : await useRecoveryCode(c.env.DB, person.id, recovery_code!);
        if (!passed) {
          const pointer = code !== undefined ? "/code" : "/recovery_code";
          throw new ApiError("invalid_credentials", "The code does not match, or was used already.", {
            errors: [{ pointer, detail: "does not match, or was used already" }],
          });
        }
        await rotateSession(c, { secondFactor: "done" });
        await rememberDevice(c, person.email_key);
        c.header("Cache-Control", "no-store");
        return c.json(await sessionToJson(c));
      },
    ),
  )
  .post(
    "/sign-out",
    ...operations.signOut(requireSession({ allowPending: true }), async (c) => {
      await endSession(c);
      return c.body(null, 204);
    }),
  )
  .get(
    "/session",
    ...operations.session(requireSession({ allowPending: true }), async (c) => {
      c.header("Cache-Control", "no-store");
      return c.json(await sessionToJson(c));
    }),
  )
  .get(
    "/sessions",
    ...operations.sessions(requireSession(), async (c) => {
      const { results } = await c.env.DB.prepare(
        `SELECT * FROM sessions WHERE person_id = ? AND revoked_at IS NULL AND expires_at > ?
          ORDER BY last_seen_at DESC, id LIMIT 100`,
      )
        .bind(c.var.session.personId, clock.now())
        .all<SessionRow>();
      c.header("Cache-Control", "no-store");
      return c.json({ sessions: results.map((row) => sessionItemToJson(row, c.var.session.id)) });
    }),
  )
  .delete(
    `/sessions/${SESSION_ID}`,
    ...operations.revokeSession(requireSession(), async (c) => {
      const id = c.req.param("sessionId")!;
      const now = clock.now();
      const ended = await c.env.DB.prepare(
        `UPDATE sessions SET revoked_at = ?
          WHERE id = ? AND person_id = ? AND revoked_at IS NULL AND expires_at > ? RETURNING id`,
      )
        .bind(now, id, c.var.session.personId, now)
        .first();
      if (!ended) throw new ApiError("not_found", "You have no open session with this id.");
      if (id === c.var.session.id) clearSessionCookie(c);
      return c.body(null, 204);
    }),
  )
  .post(
    "/sign-out-everywhere",
    ...operations.signOutEverywhere(requireSession(), async (c) => {
      await c.env.DB.prepare("UPDATE sessions SET revoked_at = ? WHERE person_id = ? AND revoked_at IS NULL")
        .bind(clock.now(), c.var.session.personId)
        .run();
      clearSessionCookie(c);
      return c.body(null, 204);
    }),
  )
  .post(
    "/token",
    ...operations.token(requireSession(), validate("json", tokenBody), async (c) => {
      const accountId = await tokenAccount(c, c.req.valid("json").account);
      const { personId } = c.var.session;
      const standing = await personStanding(c.env.DB, personId, c.var.session.id, accountId, clock.now());
      if (!standing) {
        throw new ApiError(
          "forbidden",
          `You are not in account ${accountId}: neither a member nor given any of its lists.`,
        );
      }
      if (accountId !== c.var.session.accountId) await rotateSession(c, { accountId });
      const scope = writesWith(standing) ? "read write" : "read";
      const { token, expiresIn } = await mintPersonToken((await signingKeys(c.env)).current, {
        personId,
        sessionId: c.var.session.id,
        accountId,
        scope,
      });
      c.header("Cache-Control", "no-store");
      c.header("Pragma", "no-cache");
      return c.json({
        access_token: token,
        token_type: "Bearer" as const,
        expires_in: expiresIn,
        scope,
        account: accountId,
        csrf_token: await csrfToken(c.env, c.var.session.id),
      });
    }),
  );
