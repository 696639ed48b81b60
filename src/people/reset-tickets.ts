/**
 * Password reset links: single-use secrets an administrator (or
 * `npm run people -- reset`) issues and hands over, so no email service is
 * needed. Only the SHA-256 of a link's secret is kept (`auth_tickets`, kind
 * `reset`; ./tickets.ts); a person has at most one good link, the newest,
 * for 24 hours. Using one sets the password and ends every session of the
 * person (./password-routes.ts).
 */
import { clock } from "../core/clock";
import { base64urlEncode } from "../core/crypto";
import { ticketIdOf } from "./tickets";

/** How long a reset link works. */
export const RESET_TICKET_MS = 24 * 3600 * 1000;

/**
 * Issues a password reset link's secret for `personId` (the path segment of
 * POST /v3.0/auth/password-reset/{token}); any earlier link of theirs stops working.
 */
export async function issueResetTicket(db: D1Database, personId: number): Promise<string> {
  const secret = base64urlEncode(crypto.getRandomValues(new Uint8Array(32)));
  const now = clock.now();
  await db.batch([
    db.prepare("DELETE FROM auth_tickets WHERE person_id = ? AND kind = 'reset'").bind(personId),
    db
      .prepare("INSERT INTO auth_tickets (id, kind, person_id, expires_at, created_at) VALUES (?, 'reset', ?, ?, ?)")
      .bind(await ticketIdOf(secret), personId, now + RESET_TICKET_MS, now),
  ]);
  return secret;
}
