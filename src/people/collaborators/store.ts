/**
 * A list's collaborators: people given `editor` or `viewer` on one list of an
 * account without being its members. The list lives on the account's shard,
 * the collaborators in the directory beside the members (docs/scaling.md), so
 * the list is checked first and the grant written after, each on its own
 * database; a list deleted in between leaves a grant on no list, which grants
 * nothing (src/db/list-grants.ts).
 */
import { and, eq } from "drizzle-orm";
import { clock } from "../../core/clock";
import type { ListRole } from "../../core/env";
import { ApiError, notFound } from "../../core/problem";
import { database } from "../../db/client";
import { keyset, type Bound } from "../../db/keyset";
import { listCollaborators, people } from "../../db/schema";

export type CollaboratorRow = {
  id: number;
  name: string;
  email: string;
  list: number;
  role: ListRole;
  created_at: Date;
  updated_at: Date;
};

const columns = {
  id: people.id,
  name: people.name,
  email: people.email,
  list: listCollaborators.list_id,
  role: listCollaborators.role,
  created_at: listCollaborators.created_at,
  updated_at: listCollaborators.updated_at,
};

/** One keyset page of the list's collaborators, by person id, over the `(list_id, person_id)` key. */
export async function pageCollaborators(
  d1: D1Database,
  accountId: number,
  listId: number,
  bound: Bound,
  take: number,
): Promise<CollaboratorRow[]> {
  const { where, orderBy } = keyset([listCollaborators.person_id], bound);
  return database(d1)
    .select(columns)
    .from(listCollaborators)
    .innerJoin(people, eq(people.id, listCollaborators.person_id))
    .where(and(eq(listCollaborators.list_id, listId), eq(listCollaborators.account_id, accountId), where))
    .orderBy(...orderBy)
    .limit(take);
}

const COLLABORATOR = `SELECT p.id, p.name, p.email, c.list_id AS list, c.role, c.created_at, c.updated_at
  FROM list_collaborators AS c JOIN people AS p ON p.id = c.person_id
  WHERE c.list_id = ? AND c.person_id = ?`;

function collaboratorOf(raw: Record<string, unknown>): CollaboratorRow {
  return {
    id: Number(raw.id),
    name: String(raw.name),
    email: String(raw.email),
    list: Number(raw.list),
    role: raw.role as ListRole,
    created_at: new Date(Number(raw.created_at)),
    updated_at: new Date(Number(raw.updated_at)),
  };
}

/**
 * Gives `personId` the role `role` on the list, or changes it (their version grows when it changes).
 * The person must be known to the account, a member of it or a collaborator on one of its lists: an id
 * does not reach anyone else (invite them by email instead), so an admin cannot learn who a person id
 * of another account is. `created` tells a new collaborator from a changed one.
 */
export async function putCollaborator(
  d1: D1Database,
  accountId: number,
  listId: number,
  personId: number,
  role: ListRole,
): Promise<{ row: CollaboratorRow; created: boolean }> {
  const now = clock.now();
  const [before, , after] = await d1.batch<Record<string, unknown>>([
    d1.prepare("SELECT 1 FROM list_collaborators WHERE list_id = ? AND person_id = ?").bind(listId, personId),
    d1
      .prepare(
        `INSERT INTO list_collaborators (account_id, list_id, person_id, role, created_at, updated_at)
         SELECT ?1, ?2, ?3, ?4, ?5, ?5
         WHERE EXISTS (SELECT 1 FROM members WHERE account_id = ?1 AND person_id = ?3)
            OR EXISTS (SELECT 1 FROM list_collaborators WHERE account_id = ?1 AND person_id = ?3)
         ON CONFLICT (list_id, person_id) DO UPDATE SET
           role = excluded.role,
           version = version + (role <> excluded.role),
           updated_at = CASE WHEN role <> excluded.role THEN excluded.updated_at ELSE updated_at END`,
      )
      .bind(accountId, listId, personId, role, now),
    d1.prepare(COLLABORATOR).bind(listId, personId),
  ]);
  const row = after?.results[0];
  if (!row) {
    throw new ApiError(
      "not_found",
      "No member of this account and no collaborator on its lists has this person id; invite them by email with `list`.",
    );
  }
  return { row: collaboratorOf(row), created: !before?.results.length };
}

/** Takes the list from `personId`; 404 if they were not its collaborator. Their next request acts without it. */
export async function removeCollaborator(
  d1: D1Database,
  accountId: number,
  listId: number,
  personId: number,
): Promise<void> {
  const removed = await d1
    .prepare(
      "DELETE FROM list_collaborators WHERE list_id = ? AND person_id = ? AND account_id = ? RETURNING person_id",
    )
    .bind(listId, personId, accountId)
    .first();
  if (!removed) throw notFound("collaborator");
}
