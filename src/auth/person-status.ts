/**
 * A person's standing in an account, read from the directory at every request
 * their token makes (one round trip, three indexed reads): their session must
 * still be open, and they must still be a member of the account or a
 * collaborator on some of its lists. So signing out, removing a member or
 * lowering a role takes effect at the very next request, where a client's
 * token is trusted for up to a minute (./client-status.ts): a person's
 * standing changes by someone else's hand, a client's only by its own
 * rotation or revocation.
 */
import type { ListRole, Role } from "../core/env";

export type Standing = { role: Role | null; lists: ReadonlyMap<number, ListRole> };

/** The person's role and list roles in `accountId`, or null when the session is over or they have neither. */
export async function personStanding(
  db: D1Database,
  personId: number,
  sessionId: string,
  accountId: number,
  now: number,
): Promise<Standing | null> {
  const [session, member, collaborations] = await db.batch<Record<string, unknown>>([
    db
      .prepare(
        "SELECT 1 AS open FROM sessions WHERE id = ? AND person_id = ? AND revoked_at IS NULL AND expires_at > ?",
      )
      .bind(sessionId, personId, now),
    db.prepare("SELECT role FROM members WHERE account_id = ? AND person_id = ?").bind(accountId, personId),
    db
      .prepare("SELECT list_id, role FROM list_collaborators WHERE person_id = ? AND account_id = ?")
      .bind(personId, accountId),
  ]);
  if (!session?.results.length) return null;
  const role = (member?.results[0]?.role as Role | undefined) ?? null;
  const lists = new Map(
    (collaborations?.results ?? []).map((row) => [row.list_id as number, row.role as ListRole] as const),
  );
  if (role === null && lists.size === 0) return null;
  return { role, lists };
}

/** Whether a standing lets the person write at all: a viewer, or a viewer of lists only, reads. */
export const writesWith = (standing: Standing): boolean =>
  standing.role === null ? [...standing.lists.values()].includes("editor") : standing.role !== "viewer";
