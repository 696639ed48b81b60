/**
 * Bearer token middleware (RFC 6750). Reads the token from the Authorization
 * header or, for clients that cannot set headers, the `access_token` query
 * parameter (§2.3); verifies it without a database read; checks the scope the
 * operation needs (the method's, `read` for GET/HEAD and `write` otherwise,
 * unless the operation names its own), after what a
 * person's role allows (./operation-access.ts); sets `principal` and `reach`
 * and says which account the request works for (src/db/client.ts `useAccount`).
 * A publishable key (`pk_…`, in the header or as `?key=`) is taken instead
 * of a token on the operations that accept one (publishable-keys.ts).
 */
import type { Context } from "hono";
import { createMiddleware } from "hono/factory";
import { clock } from "../core/clock";
import type { AppEnv, ClientPrincipal, PersonPrincipal } from "../core/env";
import { scopeFor } from "../core/scopes";
import { ApiError } from "../core/problem";
import { PUBLISHABLE_KEY_PREFIX } from "../core/secrets";
import { useAccount } from "../db/client";
import { queryCredential } from "../http/middleware/query-parameters";
import { matchedOperation } from "../http/route-metadata";
import { WHOLE_ACCOUNT } from "../db/reach";
import { clientInGoodStanding } from "./client-status";
import { authorizeOperation } from "./operation-access";
import { signingKeys } from "../core/signing";
import { assertOriginAllowed, authenticateKey, type ResolvedKey } from "./publishable-keys";
import { personIdOf } from "./person-token";
import { personStanding, writesWith } from "./person-status";
import { verifyToken, type TokenClaims } from "./tokens";

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

/** The credential of the request and where it came from; throws if it was sent in more than one place. */
function credentialOf(c: Context<AppEnv>): { credential: string | undefined; inQuery: boolean } {
  const header = c.req.header("Authorization");
  const fromQuery = queryCredential(c, "access_token");
  const keyParam = queryCredential(c, "key");
  const sent = [header, fromQuery, keyParam].filter((value) => value !== undefined).length;
  if (sent > 1) {
    // §2: clients MUST NOT use more than one method to transmit the token.
    throw new ApiError(
      "bad_request",
      "Send one credential: the Authorization header, access_token or key in the query, not several.",
      { headers: { "WWW-Authenticate": `${REALM}, error="invalid_request"` } },
    );
  }
  if (header === undefined) return { credential: fromQuery ?? keyParam, inQuery: sent === 1 };
  const [, scheme, credentials] = header.match(/^(\S+)(?: +([^ ].*)?)?$/) ?? [];
  // §3.1: another scheme is no token at all, so no error code; a Bearer credential that is not a b64token is one.
  if (scheme?.toLowerCase() !== "bearer") {
    throw unauthorized("The Authorization header must use the Bearer scheme.", false);
  }
  const token = credentials?.match(/^([A-Za-z0-9\-._~+/]+=*) *$/)?.[1];
  if (!token) throw unauthorized("The token is malformed.", true);
  return { credential: token, inQuery: false };
}

/** A publishable key, on an operation that takes one, from an origin it allows. */
async function keyPrincipal(c: Context<AppEnv>, key: string): Promise<ResolvedKey> {
  const resolved = await authenticateKey(c, key);
  if (!matchedOperation(c)?.publishable) {
    throw new ApiError(
      "forbidden",
      "A publishable key only reads published lists, pinpoints, events and categories; this operation needs an access token.",
    );
  }
  assertOriginAllowed(resolved, c.req.raw);
  return resolved;
}

async function clientOf(c: Context<AppEnv>, claims: TokenClaims): Promise<ClientPrincipal> {
  const waitUntil = (p: Promise<unknown>) => c.executionCtx.waitUntil(p);
  if (!(await clientInGoodStanding(c.env.DB, claims.sub, claims.ver, waitUntil))) {
    throw unauthorized("The client was revoked or its secret rotated; request a new token.", true);
  }
  return { kind: "client", clientId: claims.sub, accountId: claims.acc, scopes: claims.scope.split(" ") };
}

/** A person's token: the session it came from must be open and the person still in the account. */
async function personOf(c: Context<AppEnv>, claims: TokenClaims, sessionId: string): Promise<PersonPrincipal> {
  const personId = personIdOf(claims.sub);
  const standing =
    personId === null ? null : await personStanding(c.env.DB, personId, sessionId, claims.acc, clock.now());
  if (personId === null || standing === null) {
    throw unauthorized("The session has ended or you are no longer in this account; sign in again.", true);
  }
  // The token's scopes, narrowed by the role the person has now: a viewer (or a list viewer only) reads.
  const canWrite = writesWith(standing);
  const scopes = claims.scope.split(" ").filter((scope) => scope !== "write" || canWrite);
  return { kind: "person", personId, sessionId, accountId: claims.acc, ...standing, scopes };
}

export const requireToken = () =>
  createMiddleware<AppEnv>(async function requireToken(c, next) {
    const { credential: token, inQuery } = credentialOf(c);
    // A token in the URL makes the URL a secret: keep every answer, errors included, out of shared caches.
    // (A publishable key is no secret: its answers may be cached publicly, src/http/middleware/public-cache.ts.)
    const secretInUrl = inQuery && !token?.startsWith(PUBLISHABLE_KEY_PREFIX);
    if (secretInUrl) c.header("Cache-Control", "private, no-store");
    if (!token) throw unauthorized("An access token is required.", inQuery);

    if (token.startsWith(PUBLISHABLE_KEY_PREFIX)) {
      const key = await keyPrincipal(c, token);
      c.set("principal", key);
      // What a key reads is narrowed by its own rules (src/db/published.ts), not by a role.
      c.set("reach", WHOLE_ACCOUNT);
      await useAccount(key.accountId);
      await next();
      // The key's own CORS rule: readable by the pages it allows, whatever CORS_ORIGINS says.
      const origin = c.req.header("Origin");
      if (key.origins === null) c.res.headers.set("Access-Control-Allow-Origin", "*");
      else if (origin !== undefined) c.res.headers.set("Access-Control-Allow-Origin", origin);
      return;
    }

    const result = await verifyToken(token, await signingKeys(c.env), Math.floor(clock.now() / 1000));
    if (result.kind === "invalid") throw unauthorized(result.reason, true);
    const { claims } = result;
    const principal = claims.sid === undefined ? await clientOf(c, claims) : await personOf(c, claims, claims.sid);
    // The role before the scope: what a person's role does not allow is refused as such.
    c.set("reach", authorizeOperation(c, principal));
    const needed = matchedOperation(c)?.scope ?? scopeFor(c.req.method);
    if (!principal.scopes.includes(needed)) {
      throw new ApiError("insufficient_scope", `This operation needs the "${needed}" scope.`, {
        headers: { "WWW-Authenticate": `${REALM}, error="insufficient_scope", scope="${needed}"` },
      });
    }
    c.set("principal", principal);
    await useAccount(claims.acc);
    await next();
    // The handler may have replaced the response; the rule above still holds. An answer to a
    // client's token is that client's: never stored by a shared cache.
    if (secretInUrl) c.res.headers.set("Cache-Control", "private, no-store");
    else if (!c.res.headers.has("Cache-Control")) c.res.headers.set("Cache-Control", "private");
  });
