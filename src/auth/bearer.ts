/**
 * Bearer token middleware (RFC 6750). Reads the token from the Authorization
 * header or, for clients that cannot set headers, the `access_token` query
 * parameter (§2.3); verifies it without a database read; checks the scope the
 * method needs (`read` for GET/HEAD, `write` otherwise); sets `principal`.
 */
import { createMiddleware } from "hono/factory";
import { clock } from "../core/clock";
import type { AppEnv } from "../core/env";
import { scopeFor } from "../core/scopes";
import { ApiError } from "../core/problem";
import { clientInGoodStanding } from "./client-status";
import { signingKeys } from "../core/signing";
import { verifyToken } from "./tokens";

const REALM = 'Bearer realm="api"';

/** 401 with the RFC 6750 §3 challenge; `error` only when a token was sent. */
function unauthorized(detail: string, tokenSent: boolean): ApiError {
  const challenge = tokenSent
    ? `${REALM}, error="invalid_token", error_description="${detail.replaceAll('"', "'")}"`
    : REALM;
  return new ApiError(tokenSent ? "invalid_token" : "unauthorized", detail, {
    headers: { "WWW-Authenticate": challenge },
  });
}

export const requireToken = () =>
  createMiddleware<AppEnv>(async function requireToken(c, next) {
    const header = c.req.header("Authorization");
    const fromQuery = c.req.query("access_token");
    // A token in the URL makes the URL a secret: keep every answer, errors included, out of shared caches.
    if (fromQuery !== undefined) c.header("Cache-Control", "private, no-store");
    if (header !== undefined && fromQuery !== undefined) {
      // §2: clients MUST NOT use more than one method to transmit the token.
      throw new ApiError("bad_request", "Send the access token in the Authorization header or the query, not both.", {
        headers: { "WWW-Authenticate": `${REALM}, error="invalid_request"` },
      });
    }
    let token = fromQuery;
    if (header !== undefined) {
      const [, scheme, credentials] = header.match(/^(\S+)(?: +([^ ].*)?)?$/) ?? [];
      // §3.1: another scheme is no token at all, so no error code; a Bearer credential that is not a b64token is one.
      if (scheme?.toLowerCase() !== "bearer") {
        throw unauthorized("The Authorization header must use the Bearer scheme.", false);
      }
      token = credentials?.match(/^([A-Za-z0-9\-._~+/]+=*) *$/)?.[1];
      if (!token) throw unauthorized("The token is malformed.", true);
    }
    if (!token) throw unauthorized("An access token is required.", fromQuery !== undefined);

    const result = await verifyToken(token, await signingKeys(c.env), Math.floor(clock.now() / 1000));
    if (result.kind === "invalid") throw unauthorized(result.reason, true);
    const { claims } = result;
    const waitUntil = (p: Promise<unknown>) => c.executionCtx.waitUntil(p);
    if (!(await clientInGoodStanding(c.env.DB, claims.sub, claims.ver, waitUntil))) {
      throw unauthorized("The client was revoked or its secret rotated; request a new token.", true);
    }

    const scopes = claims.scope.split(" ");
    const needed = scopeFor(c.req.method);
    if (!scopes.includes(needed)) {
      throw new ApiError("insufficient_scope", `This operation needs the "${needed}" scope.`, {
        headers: { "WWW-Authenticate": `${REALM}, error="insufficient_scope", scope="${needed}"` },
      });
    }
    c.set("principal", { clientId: claims.sub, accountId: claims.acc, scopes });
    await next();
    // The handler may have replaced the response; the rule above still holds.
    if (fromQuery !== undefined) c.res.headers.set("Cache-Control", "private, no-store");
  });
