/**
 * The person signed in on a request that acts in no account (accepting an
 * invitation): the one a person's access token names (src/auth/person-token.ts),
 * whichever account it was minted for, while the session it came from is
 * open. Their standing in that account does not matter here: a person
 * accepting an invitation to another account is no less signed in.
 */
import type { Context } from "hono";
import { personIdOf } from "../auth/person-token";
import { verifyToken } from "../auth/tokens";
import { clock } from "../core/clock";
import type { AppEnv } from "../core/env";
import { ApiError } from "../core/problem";
import { signingKeys } from "../core/signing";

export type SignedInPerson = { id: number; email: string; emailKey: string; name: string };

/** 401 with RFC 6750 §3's challenge for a token that is no good. */
const invalidToken = (detail: string) =>
  new ApiError("invalid_token", detail, {
    headers: { "WWW-Authenticate": `Bearer realm="api", error="invalid_token"` },
  });

/**
 * The person whose token the request carries in `Authorization: Bearer`, or null when it carries none.
 * A token that is no good is a 401, as everywhere; a client's token a 403, since only people are invited.
 */
export async function signedInPerson(c: Context<AppEnv>): Promise<SignedInPerson | null> {
  const header = c.req.header("Authorization");
  if (header === undefined) return null;
  const token = /^Bearer +([A-Za-z0-9\-._~+/]+=*) *$/i.exec(header)?.[1];
  if (!token) throw invalidToken("Send a person's access token as `Authorization: Bearer <token>`, or none.");
  const now = clock.now();
  const result = await verifyToken(token, await signingKeys(c.env), Math.floor(now / 1000));
  if (result.kind === "invalid") throw invalidToken(result.reason);
  const personId = personIdOf(result.claims.sub);
  if (personId === null || result.claims.sid === undefined) {
    throw new ApiError("forbidden", "Only a person accepts an invitation; a client's token cannot.");
  }
  const person = await c.env.DB.prepare(
    `SELECT p.id, p.email, p.email_key, p.name FROM sessions AS s JOIN people AS p ON p.id = s.person_id
     WHERE s.id = ? AND s.person_id = ? AND s.revoked_at IS NULL AND s.expires_at > ?`,
  )
    .bind(result.claims.sid, personId, now)
    .first<{ id: number; email: string; email_key: string; name: string }>();
  if (!person) throw invalidToken("The session has ended; sign in again.");
  return { id: person.id, email: person.email, emailKey: person.email_key, name: person.name };
}
