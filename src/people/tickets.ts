/**
 * `auth_tickets`, the single-use secrets of the sign-in flows: password reset
 * links (./reset-tickets.ts) and WebAuthn challenges
 * (./passkeys-challenges.ts). Each is kept under its secret's SHA-256 and is
 * good until `expires_at`; past it, used or not, nothing can use it, so the
 * hourly job (src/index.ts) deletes it, whatever its kind.
 */
import { sessionIdOf } from "./sessions";

/** The id a ticket's secret is kept under: its SHA-256, as a session's. */
export const ticketIdOf = sessionIdOf;

/** Tickets one statement deletes: each is an index range on `expires_at` (auth_tickets_expiry_idx). */
const SWEEP_BATCH = 1_000;

/**
 * The hourly job's part: deletes the tickets past their expiry at `now`, SWEEP_BATCH at a time and at most
 * `limit` a run, so a run after a flood of sign-in options stays a bounded number of queries. `more`: the
 * limit stopped the run, and the next one goes on.
 */
export async function deleteExpiredTickets(
  db: D1Database,
  now: number,
  limit = 20_000,
): Promise<{ deleted: number; more: boolean }> {
  let deleted = 0;
  while (deleted < limit) {
    const take = Math.min(SWEEP_BATCH, limit - deleted);
    const { meta } = await db
      .prepare("DELETE FROM auth_tickets WHERE id IN (SELECT id FROM auth_tickets WHERE expires_at <= ? LIMIT ?)")
      .bind(now, take)
      .run();
    deleted += meta.changes;
    if (meta.changes < take) return { deleted, more: false };
  }
  return { deleted, more: true };
}
