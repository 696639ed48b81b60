/**
 * Signed-in browsers' sessions (OWASP Session Management Cheat Sheet). The
 * cookie (`__Host-poi_session` over https, `poi_session` over http: ./cookies.ts)
 * holds 32 random bytes; the `sessions` row is found by their SHA-256, so
 * the table alone signs nobody in. A new session, with a new cookie and a new
 * CSRF token, starts at every sign-in and at every change of what the session
 * may do (a second factor passed, another account, a new password, TOTP
 * turned on), and the one before it ends: a cookie planted before any of
 * these (session fixation) is worth nothing after.
 *
 * A session ends after SESSION_IDLE_SECONDS without a request (2 hours), at
 * SESSION_ABSOLUTE_SECONDS after sign-in however busy (7 days), when it is
 * revoked (sign out, sign out everywhere, a password change ends the
 * others), or, while it waits for the second factor, after 10 minutes.
 * `expires_at` holds the earliest of these deadlines and moves with use, so
 * the one check src/auth/person-status.ts makes for a person's bearer token
 * honours them all. `last_seen_at` is written at most once a minute.
 */
import type { Context } from "hono";
import { deleteCookie, getCookie, setCookie } from "hono/cookie";
import { createMiddleware } from "hono/factory";
import { clock } from "../core/clock";
import { base64urlEncode, utf8 } from "../core/crypto";
import type { AppEnv, SessionInfo } from "../core/env";
import { ApiError } from "../core/problem";
import { markSessionOptional, markSessionRequired } from "../http/route-metadata";
import { cookieName, isHttps } from "./cookies";
import { assertCsrf, assertSameOrigin } from "./csrf";
import type { SessionRow as SessionJsonRow } from "./json";
import { personById, type Person } from "./store";

export type { SessionInfo };

const SESSION_COOKIE = "poi_session";
/** How long a session waits for its second factor. */
const PENDING_MS = 10 * 60 * 1000;
/** `last_seen_at` (and the idle deadline with it) is written at most this often. */
const TOUCH_MS = 60 * 1000;
const SAFE_METHODS = new Set(["GET", "HEAD", "OPTIONS"]);

/** The longest user agent kept, to recognise a session in the list. */
const MAX_USER_AGENT = 256;

type SessionRow = SessionJsonRow & { person_id: number; revoked_at: number | null };

/** A session id: the SHA-256 of the cookie's secret, base64url. */
export async function sessionIdOf(secret: string): Promise<string> {
  return base64urlEncode(new Uint8Array(await crypto.subtle.digest("SHA-256", utf8.encode(secret))));
}

/** The id of the session the request's cookie names (open or not), or null without a cookie. */
async function cookieSessionId(c: Context<AppEnv>): Promise<string | null> {
  const secret = getCookie(c, cookieName(c, SESSION_COOKIE));
  return secret ? sessionIdOf(secret) : null;
}

/** When a session that is `secondFactor`, created at `createdAt` and seen `now`, ends if not seen again. */
function deadline(c: Context<AppEnv>, secondFactor: SessionInfo["secondFactor"], createdAt: number, now: number) {
  const { sessionIdleSeconds, sessionAbsoluteSeconds } = c.var.config;
  const absolute = createdAt + sessionAbsoluteSeconds * 1000;
  const idle = secondFactor === "pending" ? createdAt + PENDING_MS : now + sessionIdleSeconds * 1000;
  return Math.min(absolute, idle);
}

function setSessionCookie(c: Context<AppEnv>, secret: string): void {
  setCookie(c, cookieName(c, SESSION_COOKIE), secret, {
    path: "/",
    httpOnly: true,
    secure: isHttps(c),
    sameSite: "Lax",
    maxAge: c.var.config.sessionAbsoluteSeconds,
  });
}

/** Removes the session cookie from the browser. */
export function clearSessionCookie(c: Context<AppEnv>): void {
  deleteCookie(c, cookieName(c, SESSION_COOKIE), { path: "/", secure: isHttps(c), httpOnly: true, sameSite: "Lax" });
}

/**
 * Opens a session with `fields` and sets its cookie, ending the session the request's cookie names, if any,
 * in the same batch as `alongside` (statements that must succeed or fail with it).
 */
async function openSession(
  c: Context<AppEnv>,
  fields: Omit<SessionInfo, "id">,
  alongside: D1PreparedStatement[] = [],
): Promise<SessionInfo> {
  const db = c.env.DB;
  const now = clock.now();
  const secret = base64urlEncode(crypto.getRandomValues(new Uint8Array(32)));
  const id = await sessionIdOf(secret);
  const previous = await cookieSessionId(c);
  const userAgent = c.req.header("User-Agent")?.slice(0, MAX_USER_AGENT) ?? null;
  await db.batch([
    ...alongside,
    ...(previous === null
      ? []
      : [db.prepare("UPDATE sessions SET revoked_at = ? WHERE id = ? AND revoked_at IS NULL").bind(now, previous)]),
    db
      .prepare(
        `INSERT INTO sessions (id, person_id, account_id, second_factor, user_agent, created_at, last_seen_at, expires_at)
         VALUES (?, ?, ?, ?, ?, ?, ?, ?)`,
      )
      .bind(
        id,
        fields.personId,
        fields.accountId,
        fields.secondFactor,
        userAgent,
        fields.createdAt,
        now,
        deadline(c, fields.secondFactor, fields.createdAt, now),
      ),
  ]);
  setSessionCookie(c, secret);
  const session = { id, ...fields };
  c.set("session", session);
  return session;
}

/**
 * Signs `personId` in on this browser: a new session (`pending` while a second factor is awaited) and its
 * cookie; the session the request's cookie named, if any, ends.
 */
export async function startSession(
  c: Context<AppEnv>,
  personId: number,
  secondFactor: SessionInfo["secondFactor"],
): Promise<{ sessionId: string }> {
  const session = await openSession(c, { personId, accountId: null, secondFactor, createdAt: clock.now() });
  return { sessionId: session.id };
}

/**
 * A new session (id, cookie, CSRF token) for the same person, in place of the request's (`c.var.session`),
 * after a change of what it may do: `changes` says what changes; `alongside`, statements that must succeed
 * or fail with it. The absolute timeout still counts from the sign-in.
 */
export async function rotateSession(
  c: Context<AppEnv>,
  changes: Partial<Pick<SessionInfo, "accountId" | "secondFactor">> = {},
  alongside: D1PreparedStatement[] = [],
): Promise<SessionInfo> {
  const { id: _id, ...current } = c.var.session;
  return openSession(c, { ...current, ...changes }, alongside);
}

const unauthorized = (detail: string) => new ApiError("unauthorized", detail);

/**
 * Middleware: the request's session, from its cookie, in `c.var.session`; 401 `unauthorized` without an
 * open one (or, unless `allowPending`, while its second factor is awaited). On unsafe methods, the CSRF
 * defences (./csrf.ts), 403 `csrf_failed`. Touches the session, moving its idle deadline.
 * `optional` (accepting an invitation, which a person may do signed in or not): a request without the
 * cookie goes on signed out, its handler reading `sessionIfSignedIn`; one with the cookie is held to all of
 * the above, so a browser is never served as signed out while it holds a session, nor as someone else.
 */
export const requireSession = (options: { allowPending?: boolean; optional?: boolean } = {}) =>
  (options.optional ? markSessionOptional : markSessionRequired)(
    createMiddleware<AppEnv>(async function requireSession(c, next) {
      const id = await cookieSessionId(c);
      if (id === null && options.optional) {
        // Without a session there is no CSRF token to ask for, but what the request does (an invitation
        // accepted, a person made) must still come from this service's pages or a program, not another site.
        if (!SAFE_METHODS.has(c.req.method)) assertSameOrigin(c);
        return next();
      }
      if (id === null)
        throw unauthorized("Sign in first: this operation takes the session cookie of a signed-in browser.");
      const now = clock.now();
      const row = await c.env.DB.prepare(
        "SELECT * FROM sessions WHERE id = ? AND revoked_at IS NULL AND expires_at > ?",
      )
        .bind(id, now)
        .first<SessionRow>();
      if (!row) {
        clearSessionCookie(c);
        throw unauthorized("The session has ended (signed out, or unused for too long); sign in again.");
      }
      if (row.second_factor === "pending" && !options.allowPending) {
        throw unauthorized("Complete the sign-in first: POST /v3.0/auth/second-factor with your code.");
      }
      if (!SAFE_METHODS.has(c.req.method)) await assertCsrf(c, row.id);
      if (now - row.last_seen_at >= TOUCH_MS && row.second_factor !== "pending") {
        await c.env.DB.prepare("UPDATE sessions SET last_seen_at = ?, expires_at = ? WHERE id = ?")
          .bind(now, deadline(c, row.second_factor, row.created_at, now), row.id)
          .run();
      }
      c.set("session", {
        id: row.id,
        personId: row.person_id,
        accountId: row.account_id,
        secondFactor: row.second_factor,
        createdAt: row.created_at,
      });
      await next();
    }),
  );

/** The session of a request `requireSession({ optional: true })` let through: null without the cookie. */
export const sessionIfSignedIn = (c: Context<AppEnv>): SessionInfo | null => c.get("session") ?? null;

/** Ends the request's session and removes its cookie. */
export async function endSession(c: Context<AppEnv>): Promise<void> {
  await c.env.DB.prepare("UPDATE sessions SET revoked_at = ? WHERE id = ? AND revoked_at IS NULL")
    .bind(clock.now(), c.var.session.id)
    .run();
  clearSessionCookie(c);
}

/** The person of the request's session (sessions end with their person, so there is one). */
export async function sessionPerson(c: Context<AppEnv>): Promise<Person> {
  return (await personById(c.env.DB, c.var.session.personId))!;
}
