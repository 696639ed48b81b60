/**
 * WebAuthn challenges as `passkey` tickets in `auth_tickets`: 32 random bytes
 * the authenticator signs, good once and for 5 minutes (the ceremony's own
 * timeout). Only the challenge's SHA-256 is kept, as the ticket's id, so the
 * table gives nobody a challenge to answer. A registration challenge is bound
 * to the person and the session that asked for it; a sign-in challenge to
 * nobody, since a discoverable passkey names its person only in its answer.
 *
 * A challenge is used up by the first answer that names it, whether that
 * answer is then accepted or not: no answer can be tried twice.
 */
import { base64urlEncode } from "../core/crypto";
import { ticketIdOf } from "./tickets";

/** How long a challenge may be answered, and the `timeout` the browser is given. */
export const CHALLENGE_TTL_MS = 5 * 60_000;

export type Ceremony = { kind: "registration"; personId: number; sessionId: string } | { kind: "sign-in" };

/** What the ticket records of the ceremony, always spelt the same, so that it can be matched as text. */
function payloadOf(ceremony: Ceremony): string {
  return JSON.stringify(
    ceremony.kind === "registration"
      ? { ceremony: ceremony.kind, session: ceremony.sessionId }
      : { ceremony: ceremony.kind },
  );
}

const personOf = (ceremony: Ceremony) => (ceremony.kind === "registration" ? ceremony.personId : null);

/** A new challenge for `ceremony`, base64url, recorded until it is answered or expires. */
export async function issueChallenge(db: D1Database, ceremony: Ceremony, now: number): Promise<string> {
  const challenge = base64urlEncode(crypto.getRandomValues(new Uint8Array(32)));
  await db
    .prepare("INSERT INTO auth_tickets (id, kind, person_id, payload, expires_at) VALUES (?, 'passkey', ?, ?, ?)")
    .bind(await ticketIdOf(challenge), personOf(ceremony), payloadOf(ceremony), now + CHALLENGE_TTL_MS)
    .run();
  return challenge;
}

/**
 * The statement that uses up `challenge` for `ceremony`: it returns a row only if the challenge was issued
 * for this very ceremony (and person and session), is unexpired and was never used, and marks it used. One
 * statement, so of two answers sent at once only one finds it.
 */
export async function useChallenge(
  db: D1Database,
  challenge: string,
  ceremony: Ceremony,
  now: number,
): Promise<D1PreparedStatement> {
  return db
    .prepare(
      `UPDATE auth_tickets SET used_at = ?1
      WHERE id = ?2 AND kind = 'passkey' AND used_at IS NULL AND expires_at > ?1 AND payload = ?3 AND person_id IS ?4
      RETURNING id`,
    )
    .bind(now, await ticketIdOf(challenge), payloadOf(ceremony), personOf(ceremony));
}
