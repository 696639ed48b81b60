/**
 * Signed-in browsers: the session cookie and its row in `sessions`
 * (docs/people-and-roles.md, "Sessions"). The cookie holds 32 random bytes;
 * the row's id is their SHA-256, so the table alone signs nobody in. The
 * cookie is `HttpOnly`, `SameSite=Lax` and, over https, `Secure` with the
 * `__Host-` prefix. A session ends 2 hours after its last request or 7 days
 * after sign-in, whichever comes first, or when revoked.
 *
 * Writes with the cookie must come from the service's own pages: the
 * Fetch Metadata and `Origin` checks (src/http/middleware/same-origin.ts),
 * then `X-CSRF-Token`, an HMAC of the session id that GET /v3.0/auth/session
 * gives the page (OWASP CSRF Prevention Cheat Sheet, "Signed double-submit
 * cookie", with the session as the secret's holder).
 */
import type { Context } from "hono";
import { getCookie, setCookie } from "hono/cookie";
import { createMiddleware } from "hono/factory";
import { clock } from "../core/clock";
import { base64urlDecode, base64urlEncode, timingSafeEqual, utf8 } from "../core/crypto";
import { derivedKeys, type KeyUse } from "../core/derived-keys";
import type { AppEnv, Bindings, SessionInfo } from "../core/env";
import { ApiError } from "../core/problem";
import { assertSameOrigin } from "../http/middleware/same-origin";

const IDLE_MS = 2 * 3600_000;
const ABSOLUTE_MS = 7 * 24 * 3600_000;
/** A session seen within this long is not written again: one write per minute, not one per request. */
const TOUCH_EVERY_MS = 60_000;

const SAFE_METHODS = new Set(["GET", "HEAD", "OPTIONS"]);

const CSRF_KEY: KeyUse = { info: "csrf token", algorithm: { name: "HMAC", hash: "SHA-256" }, usages: ["sign"] };

const isHttps = (c: Context<AppEnv>) => new URL(c.req.url).protocol === "https:";

/** `__Host-` asks the browser to keep the cookie to this host, over https, on every path. */
const cookieName = (c: Context<AppEnv>) => (isHttps(c) ? "__Host-poi_session" : "poi_session");

async function sessionIdOf(secret: string): Promise<string> {
  return base64urlEncode(new Uint8Array(await crypto.subtle.digest("SHA-256", utf8.encode(secret))));
}

/** The session's CSRF token under the current signing secret. */
export async function csrfTokenOf(env: Bindings, sessionId: string): Promise<string> {
  const { current } = await derivedKeys(env, CSRF_KEY);
  return base64urlEncode(new Uint8Array(await crypto.subtle.sign("HMAC", current, utf8.encode(sessionId))));
}

/** Whether `token` is the session's CSRF token under the current or the previous signing secret. */
async function csrfTokenMatches(env: Bindings, sessionId: string, token: string | undefined): Promise<boolean> {
  const given = token === undefined ? null : base64urlDecode(token);
  if (given === null) return false;
  const { current, previous } = await derivedKeys(env, CSRF_KEY);
  for (const key of previous === null ? [current] : [current, previous]) {
    const expected = new Uint8Array(await crypto.subtle.sign("HMAC", key, utf8.encode(sessionId)));
    if (timingSafeEqual(expected, given)) return true;
  }
  return false;
}

/**
 * Signs `personId` in: revokes the session the request came with, if any (no fixation), opens a new one
 * in the first account the person is a member of, and sets its cookie.
 */
export async function startSession(
  c: Context<AppEnv>,
  personId: number,
  secondFactor: "none" | "pending" | "done",
): Promise<{ sessionId: string }> {
  const db = c.env.DB;
  const now = clock.now();
  const previous = getCookie(c, cookieName(c));
  const secret = base64urlEncode(crypto.getRandomValues(new Uint8Array(32)));
  const sessionId = await sessionIdOf(secret);
  await db.batch([
    ...(previous === undefined
      ? []
      : [
          db
            .prepare("UPDATE sessions SET revoked_at = ? WHERE id = ? AND revoked_at IS NULL")
            .bind(now, await sessionIdOf(previous)),
        ]),
    db
      .prepare(
        `INSERT INTO sessions (id, person_id, account_id, second_factor, user_agent, last_seen_at, expires_at)
        VALUES (?1, ?2, (SELECT min(account_id) FROM members WHERE person_id = ?2), ?3, ?4, ?5, ?6)`,
      )
      .bind(sessionId, personId, secondFactor, c.req.header("User-Agent") ?? null, now, now + ABSOLUTE_MS),
  ]);
  setCookie(c, cookieName(c), secret, { httpOnly: true, secure: isHttps(c), sameSite: "Lax", path: "/" });
  return { sessionId };
}

type SessionRow = {
  person_id: number;
  account_id: number | null;
  second_factor: SessionInfo["secondFactor"];
  created_at: number;
  last_seen_at: number;
};

/**
 * The signed-in session of the request's cookie, in `c.var.session`; 401 without an open one. Unsafe
 * methods must also pass the same-origin checks and carry the session's `X-CSRF-Token` (403 otherwise).
 * A session between password and second factor passes only with `allowPending`.
 */
export const requireSession = (options: { allowPending?: boolean } = {}) =>
  createMiddleware<AppEnv>(async function requireSession(c, next) {
    const secret = getCookie(c, cookieName(c));
    const now = clock.now();
    const id = secret === undefined ? null : await sessionIdOf(secret);
    const row =
      id === null
        ? null
        : await c.env.DB.prepare(
            `SELECT person_id, account_id, second_factor, created_at, last_seen_at FROM sessions
            WHERE id = ? AND revoked_at IS NULL AND expires_at > ? AND last_seen_at > ?`,
          )
            .bind(id, now, now - IDLE_MS)
            .first<SessionRow>();
    if (id === null || row === null || (row.second_factor === "pending" && !options.allowPending)) {
      throw new ApiError("unauthorized", "Sign in first: this needs a signed-in session.");
    }
    if (!SAFE_METHODS.has(c.req.method)) {
      assertSameOrigin(c);
      if (!(await csrfTokenMatches(c.env, id, c.req.header("X-CSRF-Token")))) {
        throw new ApiError("csrf_failed", "X-CSRF-Token is missing or wrong: GET /v3.0/auth/session gives it.");
      }
    }
    if (now - row.last_seen_at >= TOUCH_EVERY_MS) {
      await c.env.DB.prepare("UPDATE sessions SET last_seen_at = ? WHERE id = ?").bind(now, id).run();
    }
    c.set("session", {
      id,
      personId: row.person_id,
      accountId: row.account_id,
      secondFactor: row.second_factor,
      createdAt: row.created_at,
    });
    await next();
  });
