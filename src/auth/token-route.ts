/**
 * POST /v3.0/oauth2/token: the OAuth 2.0 client credentials grant
 * (RFC 6749 §4.4). Errors use the RFC 6749 §5.2 body, not problem details
 * (oauth.ts); the client authenticates with HTTP Basic (basic.ts) or the
 * client fields of the form.
 */
import { and, eq, isNull, sql } from "drizzle-orm";
import { Hono, type Context } from "hono";
import * as z from "zod";
import { clock } from "../core/clock";
import { secretMatches } from "../core/crypto";
import type { AppEnv } from "../core/env";
import { SCOPES } from "../core/scopes";
import { signingKeys } from "../core/signing";
import { preparedOnce } from "../db/client";
import { clients } from "../db/schema";
import { declaredLength, readBodyWithin } from "../http/body";
import { limitIssuedToken, limitTokenAttempt, tokenRatePolicy } from "../http/middleware/rate-limit";
import { operation } from "../http/route-metadata";
import { parseBasicAuthorization } from "./basic";
import { oauthError, oauthErrorJson, tokenJson, tokenRequest } from "./oauth";
import { signToken } from "./tokens";

/** Form bodies of the token endpoint are small; anything bigger is not a token request. */
const MAX_FORM_BYTES = 16 * 1024;

async function readForm(request: Request): Promise<URLSearchParams | FormData | null> {
  const type = request.headers.get("Content-Type")?.split(";")[0]?.trim().toLowerCase();
  if (type !== "application/x-www-form-urlencoded" && type !== "multipart/form-data") return null;
  const bytes = request.body
    ? await readBodyWithin(request.body, MAX_FORM_BYTES, declaredLength(request))
    : new Uint8Array();
  if (type === "application/x-www-form-urlencoded") return new URLSearchParams(new TextDecoder().decode(bytes));
  return new Response(bytes, { headers: { "Content-Type": request.headers.get("Content-Type")! } }).formData();
}

/** The fields of a token request, as its schema names them. */
const FIELDS = tokenRequest.keyof().options;

/** A single-valued text field; `null` if absent, `undefined` if repeated or not text (§3.1). */
function field(form: URLSearchParams | FormData, name: string): string | null | undefined {
  const values = form.getAll(name);
  if (values.length === 0) return null;
  const [value] = values;
  return values.length === 1 && typeof value === "string" ? value : undefined;
}

/** The client a token request names, unless revoked. */
const activeClient = preparedOnce((db) =>
  db
    .select()
    .from(clients)
    .where(and(eq(clients.id, sql.placeholder("clientId")), isNull(clients.revoked_at)))
    .prepare(),
);

// Hashed when a client id is unknown, so the response time does not reveal which ids exist.
const UNKNOWN_CLIENT_HASH = "0".repeat(64);

/** The endpoint, for the API reference (src/openapi). */
const issueToken = operation({
  summary: "Get an access token",
  description:
    "The OAuth 2.0 client credentials grant (RFC 6749 §4.4). The client authenticates with HTTP Basic " +
    "(client id and secret) or with the `client_id` and `client_secret` fields. Send the token as " +
    "`Authorization: Bearer <token>`; it expires after `expires_in` seconds.",
  operationId: "createToken",
  tags: ["authentication"],
  body: { "application/x-www-form-urlencoded": tokenRequest, "multipart/form-data": tokenRequest },
  // The client authenticates with HTTP Basic (Swagger UI's Authorize does): no secret in an example.
  examples: {
    "application/x-www-form-urlencoded": { grant_type: "client_credentials", scope: "read" },
    "multipart/form-data": { grant_type: "client_credentials", scope: "read" },
  },
  responses: {
    200: { schema: tokenJson, headers: { "Cache-Control": { description: "`no-store`" } } },
    400: { description: "`invalid_request`, `unsupported_grant_type` or `invalid_scope`", schema: oauthErrorJson },
    401: {
      description: "`invalid_client`: unknown or revoked client, or wrong secret",
      schema: oauthErrorJson,
      headers: { "WWW-Authenticate": { description: '`Basic realm="api", charset="UTF-8"`' } },
    },
  },
  errors: [429],
});

type TokenRequest = { clientId: string; clientSecret: string; scope: string | null };

/** The form and the Authorization header as RFC 6749 §4.4 reads them, or the error answer for what is wrong. */
async function readTokenRequest(c: Context<AppEnv>): Promise<TokenRequest | Response> {
  let form: URLSearchParams | FormData | null;
  try {
    form = await readForm(c.req.raw);
  } catch {
    return oauthError("invalid_request", "The request body could not be read as a form.");
  }
  if (!form) {
    return oauthError(
      "invalid_request",
      "Send the parameters as application/x-www-form-urlencoded or multipart/form-data.",
    );
  }
  const fields = Object.fromEntries(FIELDS.map((name) => [name, field(form, name)])) as Record<
    (typeof FIELDS)[number],
    string | null | undefined
  >;
  for (const [name, value] of Object.entries(fields)) {
    if (value === undefined) return oauthError("invalid_request", `The ${name} parameter must be sent once, as text.`);
  }

  const basic = parseBasicAuthorization(c.req.header("Authorization"));
  if (basic.kind === "malformed")
    return oauthError("invalid_request", "The Authorization header is not valid Basic credentials.");
  if (basic.kind === "credentials" && fields.client_secret !== null) {
    return oauthError("invalid_request", "Authenticate with the Authorization header or with client_secret, not both.");
  }
  if (basic.kind === "credentials" && fields.client_id !== null && fields.client_id !== basic.clientId) {
    return oauthError("invalid_request", "The client_id parameter does not match the Authorization header.");
  }
  if (fields.grant_type === null) return oauthError("invalid_request", "The grant_type parameter is required.");
  if (fields.grant_type !== "client_credentials") {
    return oauthError("unsupported_grant_type", "Only the client_credentials grant is supported.");
  }

  const clientId = basic.kind === "credentials" ? basic.clientId : fields.client_id;
  const clientSecret = basic.kind === "credentials" ? basic.clientSecret : fields.client_secret;
  if (!clientId || !clientSecret) {
    return oauthError(
      "invalid_client",
      "Client authentication is required (HTTP Basic or client_id and client_secret).",
    );
  }
  return { clientId, clientSecret, scope: fields.scope ?? null };
}

/**
 * The scope granted: the one asked for, or every scope of the client when none was, in canonical order
 * (so "write read" and "read write" yield the same string); the error answer when the client may not have it.
 */
function grantedScope(allowedScopes: string, asked: string | null): string | Response {
  const allowed = allowedScopes.split(" ");
  const requested = asked ? asked.split(" ").filter(Boolean) : allowed;
  const denied = requested.filter((s) => !allowed.includes(s));
  if (denied.length > 0 || requested.length === 0) {
    return oauthError("invalid_scope", `The client may not request: ${denied.join(" ") || "(empty scope)"}.`);
  }
  return SCOPES.filter((s) => requested.includes(s)).join(" ");
}

export const tokenRoutes = new Hono<AppEnv>().use(tokenRatePolicy()).post(
  "/",
  ...issueToken(async (c) => {
    const request = await readTokenRequest(c);
    if (request instanceof Response) return request;
    // Before the secret is checked, per address: what slows guessing it, without letting anyone who
    // knows the client id use up the client's own allowance.
    await limitTokenAttempt(c);
    const client = await activeClient(c.env.DB).get({ clientId: request.clientId });
    if (!(await secretMatches(request.clientSecret, client?.secret_hash ?? UNKNOWN_CLIENT_HASH)) || !client) {
      return oauthError("invalid_client", "Client authentication failed.");
    }
    const scope = grantedScope(client.scope, request.scope);
    if (scope instanceof Response) return scope;

    // Only tokens actually issued count against the client: failures of others never refuse its secret.
    await limitIssuedToken(c, client.id);
    const ttl = c.var.config.tokenTtlSeconds;
    const iat = Math.floor(clock.now() / 1000);
    const keys = await signingKeys(c.env);
    const accessToken = await signToken(
      { sub: client.id, acc: client.account_id, scope, ver: client.secret_version, iat, exp: iat + ttl },
      keys.current,
    );
    c.header("Cache-Control", "no-store");
    c.header("Pragma", "no-cache");
    const body: z.output<typeof tokenJson> = {
      access_token: accessToken,
      token_type: "Bearer",
      expires_in: ttl,
      scope,
    };
    return c.json(body);
  }),
);
