/**
 * Signed-in browsers: the session cookie and its row in `sessions`
 * (docs/people-and-roles.md). The cookie holds 32 random bytes (./cookies.ts
 * names it); the row's id is their SHA-256, so the table alone signs nobody
 * in. A session ends 2 hours after its last request or 7 days after sign-in,
 * whichever comes first, or when revoked; `expires_at` holds the earlier of
 * the two and moves with use. Writes with the cookie must come from the
 * service's own pages with the session's CSRF token (./csrf.ts).
 */
import type { Context } from "hono";
import { getCookie, setCookie } from "hono/cookie";
import { createMiddleware } from "hono/factory";
import { clock } from "../core/clock";
import { base64urlEncode, utf8 } from "../core/crypto";
import type { AppEnv, SessionInfo } from "../core/env";
import { ApiError } from "../core/problem";
import { cookieName, isHttps } from "./cookies";
import { assertCsrf } from "./csrf";

const SESSION_COOKIE = "poi_session";
const IDLE_MS = 2 * 3600_000;
const ABSOLUTE_MS = 7 * 24 * 3600_000;
/** A session seen within this long is not written again: one write a minute, not one a request. */
const TOUCH_MS = 60_000;
const SAFE_METHODS = new Set(["GET", "HEAD", "OPTIONS"]);

async function sessionIdOf(secret: string): Promise<string> {
  return base64urlEncode(new Uint8Array(await crypto.subtle.digest("SHA-256", utf8.encode(secret))));
}

const deadline = (createdAt: number, now: number) => Math.min(createdAt + ABSOLUTE_MS, now + IDLE_MS);

/**
 * Signs `personId` in on this browser: revokes the session the request's cookie names, if any (no
 * fixation), opens a new one, acting in no account until a token names one, and sets its cookie.
 */
export async function startSession(
  c: Context<AppEnv>,
  personId: number,
  secondFactor: SessionInfo["secondFactor"],
): Promise<{ sessionId: string }> {
  const db = c.env.DB;
  const now = clock.now();
  const previous = getCookie(c, cookieName(c, SESSION_COOKIE));
  const secret = base64urlEncode(crypto.getRandomValues(new Uint8Array(32)));
  const sessionId = await sessionIdOf(secret);
  await db.batch([
    ...(previous
      ? [
          db
            .prepare("UPDATE sessions SET revoked_at = ? WHERE id = ? AND revoked_at IS NULL")
            .bind(now, await sessionIdOf(previous)),
        ]
      : []),
    db
      .prepare(
        `INSERT INTO sessions (id, person_id, second_factor, user_agent, created_at, last_seen_at, expires_at)
        VALUES (?, ?, ?, ?, ?, ?, ?)`,
      )
      .bind(sessionId, personId, secondFactor, c.req.header("User-Agent") ?? null, now, now, deadline(now, now)),
  ]);
  setCookie(c, cookieName(c, SESSION_COOKIE), secret, {
    path: "/",
    httpOnly: true,
    secure: isHttps(c),
    sameSite: "Lax",
    maxAge: ABSOLUTE_MS / 1000,
  });
  return { sessionId };
}

type SessionRow = {
  id: string;
  person_id: number;
  account_id: number | null;
  second_factor: SessionInfo["secondFactor"];
  created_at: number;
  last_seen_at: number;
};

/**
 * Middleware: the request's session, from its cookie, in `c.var.session`; 401 `unauthorized` without an
 * open one (or, unless `allowPending`, while its second factor is awaited). On unsafe methods, the CSRF
 * defences (./csrf.ts), 403 `csrf_failed`.
 */
export const requireSession = (options: { allowPending?: boolean } = {}) =>
  createMiddleware<AppEnv>(async function requireSession(c, next) {
    const secret = getCookie(c, cookieName(c, SESSION_COOKIE));
    const now = clock.now();
    const row = secret
      ? await c.env.DB.prepare(
          "SELECT * FROM sessions WHERE id = ? AND revoked_at IS NULL AND expires_at > ? AND last_seen_at > ?",
        )
          .bind(await sessionIdOf(secret), now, now - IDLE_MS)
          .first<SessionRow>()
      : null;
    if (!row || (row.second_factor === "pending" && !options.allowPending)) {
      throw new ApiError(
        "unauthorized",
        "Sign in first: this operation takes the session cookie of a signed-in browser.",
      );
    }
    if (!SAFE_METHODS.has(c.req.method)) await assertCsrf(c, row.id);
    if (now - row.last_seen_at >= TOUCH_MS) {
      await c.env.DB.prepare("UPDATE sessions SET last_seen_at = ?, expires_at = ? WHERE id = ?")
        .bind(now, deadline(row.created_at, now), row.id)
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
  });
