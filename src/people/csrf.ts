/**
 * Cross-site request forgery defences for what a browser sends with its
 * session cookie (OWASP CSRF Prevention Cheat Sheet): Fetch Metadata first,
 * the `Origin` header where a browser sends no `Sec-Fetch-Site`, and a token
 * that only this service's pages can read, in the `X-CSRF-Token` header. The
 * token is an HMAC of the session id under a key derived for it alone
 * (src/core/derived-keys.ts): nothing is stored, a token is good for exactly
 * one session, and a new session (sign-in, rotation) has a new one. The
 * session cookie's `SameSite=Lax` is a further layer, not the defence.
 */
import type { Context } from "hono";
import { base64urlDecode, base64urlEncode, utf8 } from "../core/crypto";
import { derivedKeys } from "../core/derived-keys";
import type { AppEnv, Bindings } from "../core/env";
import { ApiError } from "../core/problem";

export const CSRF_HEADER = "X-CSRF-Token";

const USE = {
  info: "csrf tokens of sessions, HMAC-SHA-256, v1",
  algorithm: { name: "HMAC", hash: "SHA-256" },
  usages: ["sign", "verify"],
};

/** The session's CSRF token, under the current signing secret. */
export async function csrfToken(env: Bindings, sessionId: string): Promise<string> {
  const { current } = await derivedKeys(env, USE);
  return base64urlEncode(new Uint8Array(await crypto.subtle.sign("HMAC", current, utf8.encode(sessionId))));
}

/** Whether `sent` is the session's token, under the current secret or the previous one (a rotation). */
async function tokenMatches(env: Bindings, sessionId: string, sent: string | undefined): Promise<boolean> {
  const mac = sent === undefined ? null : base64urlDecode(sent);
  if (!mac) return false;
  const { current, previous } = await derivedKeys(env, USE);
  for (const key of previous ? [current, previous] : [current]) {
    if (await crypto.subtle.verify("HMAC", key, mac, utf8.encode(sessionId))) return true;
  }
  return false;
}

const refuse = (detail: string) => new ApiError("csrf_failed", detail);

/**
 * Refuses a request a browser sent from another site: `Sec-Fetch-Site` other than `same-origin` (or `none`,
 * a person's own navigation), or, from a browser that sends no Fetch Metadata, an `Origin` other than this
 * service's. A request with neither header is not a browser's cross-site request (browsers send `Origin`
 * on every cross-origin POST): a script or a command-line tool.
 */
export function assertSameOrigin(c: Context<AppEnv>): void {
  const site = c.req.header("Sec-Fetch-Site");
  if (site !== undefined) {
    if (site !== "same-origin" && site !== "none") {
      throw refuse(`This request came from another site (Sec-Fetch-Site: ${site}); send it from this service's pages.`);
    }
    return;
  }
  const origin = c.req.header("Origin");
  if (origin === undefined) return;
  const own = [new URL(c.req.url).origin, c.var.config.publicOrigin];
  if (!own.includes(origin)) {
    throw refuse(`This request came from another origin (${origin}); send it from this service's pages.`);
  }
}

/** For a write with the session cookie: from this service's pages, with the session's token. */
export async function assertCsrf(c: Context<AppEnv>, sessionId: string): Promise<void> {
  assertSameOrigin(c);
  if (!(await tokenMatches(c.env, sessionId, c.req.header(CSRF_HEADER)))) {
    throw refuse(
      `Send the session's CSRF token in the ${CSRF_HEADER} header (GET /v3.0/auth/session gives it; every new ` +
        "session has a new one).",
    );
  }
}
