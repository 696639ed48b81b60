/**
 * Access tokens: compact JWS (RFC 7515) with HS256, the algorithm pinned at
 * verification, the key named by `kid`. Claims carry everything a request
 * needs (client, account, scope, secret version, times), so verifying one
 * costs no database read.
 */
import { base64urlDecode, base64urlEncode, utf8 } from "../core/crypto";
import { hmacSign, hmacVerify, keyById, type SigningKey, type SigningKeys } from "../core/signing";

export type TokenClaims = {
  /** client id, or `person:<id>` for a person's token (with `sid`) */
  sub: string;
  /** account id */
  acc: number;
  /** space-separated scopes */
  scope: string;
  /** the client's secret version when the token was issued; for a person, their standing's version */
  ver: number;
  /** a person's token only: the id of the session it was minted from */
  sid?: string;
  /** issued at, seconds */
  iat: number;
  /** expires at, seconds */
  exp: number;
};

export type VerifyResult = { kind: "valid"; claims: TokenClaims } | { kind: "invalid"; reason: string };

/** The JWS `typ` of an access token (RFC 9068 section 2.1). */
const TOKEN_TYPE = "at+jwt";

export async function signToken(claims: TokenClaims, key: SigningKey): Promise<string> {
  const header = base64urlEncode(utf8.encode(JSON.stringify({ alg: "HS256", typ: TOKEN_TYPE, kid: key.kid })));
  const payload = base64urlEncode(utf8.encode(JSON.stringify(claims)));
  const signingInput = `${header}.${payload}`;
  return `${signingInput}.${base64urlEncode(await hmacSign(key, signingInput))}`;
}

function parseJson(part: string): Record<string, unknown> | null {
  const bytes = base64urlDecode(part);
  if (!bytes) return null;
  try {
    const value: unknown = JSON.parse(utf8.decode(bytes));
    return value !== null && typeof value === "object" && !Array.isArray(value)
      ? (value as Record<string, unknown>)
      : null;
  } catch {
    return null;
  }
}

function isClaims(value: Record<string, unknown>): value is TokenClaims {
  return (
    typeof value.sub === "string" &&
    Number.isSafeInteger(value.acc) &&
    typeof value.scope === "string" &&
    Number.isSafeInteger(value.ver) &&
    Number.isSafeInteger(value.iat) &&
    Number.isSafeInteger(value.exp) &&
    (value.sid === undefined || typeof value.sid === "string")
  );
}

/**
 * Tokens this isolate has already verified, with the key that signed them: a
 * client sends the same token for hours, so its signature is checked once,
 * not per request. Expiry and the key's presence are still checked each time.
 */
const verified = new Map<string, { claims: TokenClaims; kid: string }>();
const MAX_VERIFIED = 10_000;

/** Checks signature, algorithm, key and expiry; `nowSeconds` is injected for tests. */
export async function verifyToken(token: string, keys: SigningKeys, nowSeconds: number): Promise<VerifyResult> {
  const known = verified.get(token);
  if (known && keyById(keys, known.kid)) return checkExpiry(known.claims, nowSeconds);
  const parts = token.split(".");
  if (parts.length !== 3) return { kind: "invalid", reason: "The token is malformed." };
  const [headerPart, payloadPart, signaturePart] = parts as [string, string, string];
  const header = parseJson(headerPart);
  // The type as well as the algorithm (RFC 9068 section 4): whatever else the key may sign is not an access token.
  if (!header || header.alg !== "HS256" || header.typ !== TOKEN_TYPE) {
    return { kind: "invalid", reason: "The token is malformed." };
  }
  const key = keyById(keys, header.kid);
  const signature = base64urlDecode(signaturePart);
  if (!key || !signature || !(await hmacVerify(key, signature, `${headerPart}.${payloadPart}`))) {
    return { kind: "invalid", reason: "The token signature is invalid." };
  }
  const claims = parseJson(payloadPart);
  if (!claims || !isClaims(claims)) return { kind: "invalid", reason: "The token is malformed." };
  if (verified.size >= MAX_VERIFIED) verified.clear();
  verified.set(token, { claims, kid: key.kid });
  return checkExpiry(claims, nowSeconds);
}

function checkExpiry(claims: TokenClaims, nowSeconds: number): VerifyResult {
  return claims.exp <= nowSeconds ? { kind: "invalid", reason: "The token has expired." } : { kind: "valid", claims };
}
