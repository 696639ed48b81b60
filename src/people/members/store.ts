/**
 * An account's members in the directory: page, change a role, remove, leave,
 * transfer ownership. Each change is one batch whose statements check, in SQL,
 * the rules the role table cannot state, against the rows as they are when it
 * runs: only an owner grants, changes or removes the owner role, and an
 * account always keeps an owner. D1 runs one batch at a time, as one
 * transaction, so two requests that would each remove one of the last two
 * owners cannot both pass: the second sees one owner left and changes
 * nothing. When a change changes nothing, the same batch's last statement
 * says why (no such member, not an owner, the last owner).
 */
import { and, eq } from "drizzle-orm";
import { clock } from "../../core/clock";
import type { Role } from "../../core/env";
import { ApiError, fieldError, notFound } from "../../core/problem";
import { database } from "../../db/client";
import { keyset, type Bound } from "../../db/keyset";
import { members, people } from "../../db/schema";

export type MemberRow = { id: number; name: string; email: string; role: Role; created_at: Date; updated_at: Date };

const MEMBER = `SELECT p.id, p.name, p.email, m.role, m.created_at, m.updated_at
  FROM members AS m JOIN people AS p ON p.id = m.person_id
  WHERE m.account_id = ? AND m.person_id = ?`;

function memberOf(raw: Record<string, unknown> | undefined): MemberRow | null {
  if (!raw) return null;
  return {
    id: Number(raw.id),
    name: String(raw.name),
    email: String(raw.email),
    role: raw.role as Role,
    created_at: new Date(Number(raw.created_at)),
    updated_at: new Date(Number(raw.updated_at)),
  };
}

/** One keyset page of the account's members, by person id, over the `(account_id, person_id)` key. */
export async function pageMembers(d1: D1Database, accountId: number, bound: Bound, take: number): Promise<MemberRow[]> {
  const { where, orderBy } = keyset([members.person_id], bound);
  return database(d1)
    .select({
      id: people.id,
      name: people.name,
      email: people.email,
      role: members.role,
      created_at: members.created_at,
      updated_at: members.updated_at,
    })
    .from(members)
    .innerJoin(people, eq(people.id, members.person_id))
    .where(and(eq(members.account_id, accountId), where))
    .orderBy(...orderBy)
    .limit(take);
}

/** Why a change touched no row, read in its batch: the target's and the caller's roles and the owners left. */
const STANDING = `SELECT
  (SELECT role FROM members WHERE account_id = ?1 AND person_id = ?2) AS target,
  (SELECT role FROM members WHERE account_id = ?1 AND person_id = ?3) AS caller,
  (SELECT count(*) FROM members WHERE account_id = ?1 AND role = 'owner') AS owners`;

type Standing = { target: Role | null; caller: Role | null; owners: number };

const ownerRequired = (detail: string) => new ApiError("owner_required", detail);
const lastOwner = (detail: string) => new ApiError("last_owner", detail);

/** The error for a change refused by its own conditions, from the roles as they stand. */
function refusal(standing: Standing, touchesOwner: boolean, what: "change" | "remove"): ApiError {
  if (standing.target === null) return notFound("member");
  if (touchesOwner && standing.caller !== "owner") {
    return ownerRequired("Only an owner grants, changes or removes the owner role.");
  }
  if (standing.target === "owner" && standing.owners <= 1) {
    return lastOwner(
      what === "change"
        ? "This is the account's last owner: make another member an owner first."
        : "This is the account's last owner: make another member an owner first, or transfer ownership.",
    );
  }
  if (standing.caller !== "owner" && standing.caller !== "admin") {
    // The role table let the caller in (src/auth/operation-access.ts): their role changed since.
    return new ApiError("role_forbidden", `Your role (${standing.caller ?? "none"}) does not let you manage members.`);
  }
  return new ApiError("conflict", "The member changed meanwhile; read them again and retry.");
}

/**
 * Who may change or remove the member `target` (a `members` row) for the caller `?3`: an owner, anyone;
 * an admin, anyone but an owner, and not to owner (`?4`, the new role, null on removal).
 */
const CALLER_MAY = `EXISTS (SELECT 1 FROM members AS caller
    WHERE caller.account_id = ?1 AND caller.person_id = ?3
    AND (caller.role = 'owner' OR (caller.role = 'admin' AND target.role <> 'owner' AND coalesce(?4, '') <> 'owner')))`;

/** The account keeps an owner without `target`'s owner role (unless the new role `?4` is owner). */
const OWNER_REMAINS = `(target.role <> 'owner' OR ?4 IS 'owner'
    OR (SELECT count(*) FROM members AS owners WHERE owners.account_id = ?1 AND owners.role = 'owner') > 1)`;

/**
 * Gives the member `personId` the role `role`, for the caller `callerId`. Their version grows when the role
 * changes; their next request acts with the new role (src/auth/person-status.ts).
 */
export async function changeRole(
  d1: D1Database,
  accountId: number,
  callerId: number,
  personId: number,
  role: Role,
): Promise<MemberRow> {
  const [updated, standing, member] = await d1.batch<Record<string, unknown>>([
    d1
      .prepare(
        `UPDATE members SET role = ?4, version = version + (role <> ?4),
           updated_at = CASE WHEN role <> ?4 THEN ?5 ELSE updated_at END
         WHERE account_id = ?1 AND person_id = ?2
           AND EXISTS (SELECT 1 FROM members AS target WHERE target.account_id = ?1 AND target.person_id = ?2
             AND ${CALLER_MAY} AND ${OWNER_REMAINS})
         RETURNING person_id`,
      )
      .bind(accountId, personId, callerId, role, clock.now()),
    d1.prepare(STANDING).bind(accountId, personId, callerId),
    d1.prepare(MEMBER).bind(accountId, personId),
  ]);
  if (!updated?.results.length) {
    const now = standing!.results[0] as Standing;
    throw refusal(now, now.target === "owner" || role === "owner", "change");
  }
  return memberOf(member!.results[0])!;
}

/**
 * Removes the member `personId` for the caller `callerId` (who may be the member, leaving), and with them
 * their collaborations on the account's lists: a removed person keeps nothing of the account. Their next
 * request is refused.
 */
export async function removeMember(
  d1: D1Database,
  accountId: number,
  callerId: number,
  personId: number,
): Promise<void> {
  // The caller themself may leave; else as CALLER_MAY says. The same condition on both statements, which
  // run on the same rows, so the collaborations go only with the membership.
  const removable = `EXISTS (SELECT 1 FROM members AS target WHERE target.account_id = ?1 AND target.person_id = ?2
      AND (?2 = ?3 OR ${CALLER_MAY}) AND ${OWNER_REMAINS})`;
  const [, removed, standing] = await d1.batch<Record<string, unknown>>([
    d1
      .prepare(`DELETE FROM list_collaborators WHERE account_id = ?1 AND person_id = ?2 AND ${removable}`)
      .bind(accountId, personId, callerId, null),
    d1
      .prepare(`DELETE FROM members WHERE account_id = ?1 AND person_id = ?2 AND ${removable} RETURNING person_id`)
      .bind(accountId, personId, callerId, null),
    d1.prepare(STANDING).bind(accountId, personId, callerId),
  ]);
  if (!removed?.results.length) {
    const now = standing!.results[0] as Standing;
    throw refusal(now, now.target === "owner" && personId !== callerId, "remove");
  }
}

/**
 * Makes the member `personId` an owner and the caller, who must be an owner, an admin, in one
 * transaction: the account has an owner at every moment. Returns both members as they are after.
 */
export async function transferOwnership(
  d1: D1Database,
  accountId: number,
  callerId: number,
  personId: number,
): Promise<{ owner: MemberRow; formerOwner: MemberRow }> {
  if (personId === callerId) throw fieldError("/person_id", "is you: name another member of the account");
  const now = clock.now();
  const [promoted, , standing, owner, formerOwner] = await d1.batch<Record<string, unknown>>([
    d1
      .prepare(
        `UPDATE members SET role = 'owner', version = version + (role <> 'owner'),
           updated_at = CASE WHEN role <> 'owner' THEN ?4 ELSE updated_at END
         WHERE account_id = ?1 AND person_id = ?2
           AND EXISTS (SELECT 1 FROM members AS caller
             WHERE caller.account_id = ?1 AND caller.person_id = ?3 AND caller.role = 'owner')
         RETURNING person_id`,
      )
      .bind(accountId, personId, callerId, now),
    // Only once the new owner is one, so this never leaves the account without an owner.
    d1
      .prepare(
        `UPDATE members SET role = 'admin', version = version + 1, updated_at = ?4
         WHERE account_id = ?1 AND person_id = ?3 AND role = 'owner'
           AND EXISTS (SELECT 1 FROM members AS target
             WHERE target.account_id = ?1 AND target.person_id = ?2 AND target.role = 'owner')`,
      )
      .bind(accountId, personId, callerId, now),
    d1.prepare(STANDING).bind(accountId, personId, callerId),
    d1.prepare(MEMBER).bind(accountId, personId),
    d1.prepare(MEMBER).bind(accountId, callerId),
  ]);
  if (!promoted?.results.length) {
    const { target, caller } = standing!.results[0] as Standing;
    if (caller !== "owner") throw ownerRequired("Only an owner transfers the account's ownership.");
    if (target === null) throw fieldError("/person_id", "is not a member of this account");
    throw new ApiError("conflict", "The members changed meanwhile; read them again and retry.");
  }
  return { owner: memberOf(owner!.results[0])!, formerOwner: memberOf(formerOwner!.results[0])! };
}
