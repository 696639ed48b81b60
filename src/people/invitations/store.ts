/**
 * Invitations in the directory: make, page, revoke, and accept. A link's
 * secret is never stored, only its SHA-256 (src/core/secrets.ts), so the
 * table alone invites nobody. Accepting is one batch whose every statement
 * runs only while the invitation is pending, so however many requests accept
 * one link at once, one of them makes the member (or collaborator, or person)
 * and marks it accepted, and the others change nothing: D1 runs one batch at
 * a time, as one transaction, and the first leaves it accepted for the rest.
 */
import { and, eq, sql } from "drizzle-orm";
import { clock } from "../../core/clock";
import type { Role } from "../../core/env";
import { ApiError, notFound } from "../../core/problem";
import { hashSecret } from "../../core/secrets";
import { database } from "../../db/client";
import { keyset, type Bound } from "../../db/keyset";
import { invitations } from "../../db/schema";
import type { InvitationStatus } from "./schemas";

export type Invitation = typeof invitations.$inferSelect;

export function statusOf(row: Invitation, now = clock.now()): InvitationStatus {
  if (row.accepted_at !== null) return "accepted";
  if (row.revoked_at !== null) return "revoked";
  return row.expires_at.getTime() <= now ? "expired" : "pending";
}

/** The error for accepting an invitation in `status` (not pending). */
export function notPending(status: Exclude<InvitationStatus, "pending">): ApiError {
  switch (status) {
    case "accepted":
      return new ApiError("invitation_used", "This invitation was already accepted: a link works once.");
    case "revoked":
      return new ApiError("invitation_revoked", "This invitation was revoked; ask for a new one.");
    case "expired":
      return new ApiError("invitation_expired", "This invitation has expired; ask for a new one.");
  }
}

/** Whether the person with `emailKey` already has what the invitation would give (a membership, or the list). */
export async function alreadyIn(
  d1: D1Database,
  accountId: number,
  emailKey: string,
  listId: number | null,
): Promise<boolean> {
  const row =
    listId === null
      ? await d1
          .prepare(
            `SELECT 1 FROM members AS m JOIN people AS p ON p.id = m.person_id
             WHERE m.account_id = ? AND p.email_key = ?`,
          )
          .bind(accountId, emailKey)
          .first()
      : await d1
          .prepare(
            `SELECT 1 FROM list_collaborators AS c JOIN people AS p ON p.id = c.person_id
             WHERE c.list_id = ? AND c.account_id = ? AND p.email_key = ?`,
          )
          .bind(listId, accountId, emailKey)
          .first();
  return row !== null;
}

type NewInvitation = {
  email: string;
  emailKey: string;
  role: Role;
  listId: number | null;
  invitedBy: string;
  createdAt: number;
  expiresAt: number;
};

/** Stores an invitation under the hash of `token`, which is not kept. */
export async function insertInvitation(
  d1: D1Database,
  accountId: number,
  values: NewInvitation,
  token: string,
): Promise<Invitation> {
  const row = await database(d1)
    .insert(invitations)
    .values({
      account_id: accountId,
      email: values.email,
      email_key: values.emailKey,
      role: values.role,
      list_id: values.listId,
      token_hash: await hashSecret(token),
      invited_by: values.invitedBy,
      expires_at: new Date(values.expiresAt),
      created_at: new Date(values.createdAt),
    })
    .returning()
    .get();
  return row;
}

/** One keyset page of the account's invitations, by id, over the `(account_id, id)` index. */
export async function pageInvitations(
  d1: D1Database,
  accountId: number,
  bound: Bound,
  take: number,
): Promise<Invitation[]> {
  const { where, orderBy } = keyset([invitations.id], bound);
  return database(d1)
    .select()
    .from(invitations)
    .where(and(eq(invitations.account_id, accountId), where))
    .orderBy(...orderBy)
    .limit(take);
}

/**
 * Revokes the account's invitation `id`: its link stops working. Revoking a revoked or expired one changes
 * nothing more; an accepted one is 409 (remove the member instead); another account's is 404.
 */
export async function revokeInvitation(d1: D1Database, accountId: number, id: number): Promise<void> {
  const [revoked, found] = await d1.batch<Record<string, unknown>>([
    d1
      .prepare(
        `UPDATE invitations SET revoked_at = ? WHERE id = ? AND account_id = ?
           AND accepted_at IS NULL AND revoked_at IS NULL RETURNING id`,
      )
      .bind(clock.now(), id, accountId),
    d1.prepare("SELECT accepted_at FROM invitations WHERE id = ? AND account_id = ?").bind(id, accountId),
  ]);
  if (revoked?.results.length) return;
  const row = found?.results[0];
  if (!row) throw notFound("invitation");
  if (row.accepted_at !== null) {
    throw new ApiError("conflict", "The invitation was accepted already; remove the member or collaborator instead.");
  }
}

export type FoundInvitation = Invitation & { account_name: string };

/** The invitation whose link carries `token`; 404 when none does. */
export async function invitationByToken(d1: D1Database, token: string): Promise<FoundInvitation> {
  const row = await database(d1)
    .select({
      invitation: invitations,
      account_name: sql<string>`(SELECT name FROM accounts WHERE id = ${invitations.account_id})`,
    })
    .from(invitations)
    .where(eq(invitations.token_hash, await hashSecret(token)))
    .get();
  if (!row) throw new ApiError("not_found", "No invitation has this token: check the link, or ask for a new one.");
  return { ...row.invitation, account_name: row.account_name };
}

/** While the invitation `?1` (its token's hash) is pending at `?2` (now). */
const PENDING = "token_hash = ?1 AND accepted_at IS NULL AND revoked_at IS NULL AND expires_at > ?2";

/** The role the person has after accepting: in the account, or on the list. */
const ROLE_AFTER = `SELECT coalesce(
    (SELECT role FROM list_collaborators WHERE list_id = ?3 AND person_id = ?2),
    (SELECT role FROM members WHERE account_id = ?1 AND person_id = ?2)) AS role`;

/** Who accepted, and their role after: in the account, or on the list (a list role is a role's name too). */
export type Acceptance = { role: Role; personId: number };

/** After a batch that accepted nothing: why, as the invitation stands now. */
async function refusal(d1: D1Database, tokenHash: string): Promise<ApiError> {
  const row = await database(d1).select().from(invitations).where(eq(invitations.token_hash, tokenHash)).get();
  if (!row) return notFound("invitation");
  const status = statusOf(row);
  return status === "pending"
    ? new ApiError("conflict", "The invitation changed meanwhile; try again.")
    : notPending(status);
}

/**
 * Accepts the invitation as the signed-in person `personId` with `emailKey`: they become a member with its
 * role, or a collaborator on its list. One already there keeps what they have (an invitation never lowers
 * a role, nor takes an account's last owner's). 410 if it is no longer pending.
 */
export async function acceptAsPerson(
  d1: D1Database,
  invitation: FoundInvitation,
  personId: number,
  emailKey: string,
): Promise<Acceptance> {
  const now = clock.now();
  const hash = invitation.token_hash;
  const [, , accepted, after] = await d1.batch<Record<string, unknown>>([
    d1
      .prepare(
        `INSERT INTO members (account_id, person_id, role, created_at, updated_at)
         SELECT account_id, ?3, role, ?2, ?2 FROM invitations WHERE ${PENDING} AND list_id IS NULL AND email_key = ?4
         ON CONFLICT (account_id, person_id) DO NOTHING`,
      )
      .bind(hash, now, personId, emailKey),
    d1
      .prepare(
        `INSERT INTO list_collaborators (account_id, list_id, person_id, role, created_at, updated_at)
         SELECT account_id, list_id, ?3, role, ?2, ?2 FROM invitations
         WHERE ${PENDING} AND list_id IS NOT NULL AND email_key = ?4
         ON CONFLICT (list_id, person_id) DO NOTHING`,
      )
      .bind(hash, now, personId, emailKey),
    d1
      .prepare(
        `UPDATE invitations SET accepted_at = ?2, accepted_by = ?3 WHERE ${PENDING} AND email_key = ?4 RETURNING id`,
      )
      .bind(hash, now, personId, emailKey),
    d1.prepare(ROLE_AFTER).bind(invitation.account_id, personId, invitation.list_id),
  ]);
  if (!accepted?.results.length) throw await refusal(d1, hash);
  return { role: after!.results[0]!.role as Role, personId };
}

/**
 * Accepts the invitation by making the person it was sent to, with `name` and the stored form of their
 * password, then as `acceptAsPerson`. 409 `sign_in_to_accept` when someone has the address already.
 */
export async function acceptAsNewPerson(
  d1: D1Database,
  invitation: FoundInvitation,
  name: string,
  passwordHash: string,
): Promise<Acceptance> {
  const now = clock.now();
  const hash = invitation.token_hash;
  const person = "(SELECT id FROM people WHERE people.email_key = invitations.email_key)";
  let results: D1Result<Record<string, unknown>>[];
  try {
    results = await d1.batch<Record<string, unknown>>([
      d1
        .prepare(
          `INSERT INTO people (email, email_key, name, password_hash, created_at, updated_at)
           SELECT email, email_key, ?3, ?4, ?2, ?2 FROM invitations WHERE ${PENDING}`,
        )
        .bind(hash, now, name, passwordHash),
      d1
        .prepare(
          `INSERT INTO members (account_id, person_id, role, created_at, updated_at)
           SELECT account_id, ${person}, role, ?2, ?2 FROM invitations WHERE ${PENDING} AND list_id IS NULL`,
        )
        .bind(hash, now),
      d1
        .prepare(
          `INSERT INTO list_collaborators (account_id, list_id, person_id, role, created_at, updated_at)
           SELECT account_id, list_id, ${person}, role, ?2, ?2 FROM invitations WHERE ${PENDING} AND list_id IS NOT NULL`,
        )
        .bind(hash, now),
      d1
        .prepare(
          `UPDATE invitations SET accepted_at = ?2, accepted_by = ${person} WHERE ${PENDING} RETURNING accepted_by`,
        )
        .bind(hash, now),
    ]);
  } catch (error) {
    if (String((error as Error).message).includes("people.email_key")) throw signInToAccept();
    throw error;
  }
  const accepted = results[3]?.results[0];
  if (!accepted) throw await refusal(d1, hash);
  return { role: invitation.role, personId: Number(accepted.accepted_by) };
}

export const signInToAccept = () =>
  new ApiError("sign_in_to_accept", "Someone has this email address already: sign in as them, then accept signed in.");
