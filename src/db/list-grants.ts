/**
 * What the directory grants on a list of an account's shard: its
 * collaborators (`list_collaborators`) and the invitations to it. Deleting
 * the list ends them, right after the list itself is gone, in one
 * transaction of the directory: the list and its grants live in different
 * databases (docs/scaling.md), so no single transaction covers both. Should
 * this second write fail, what it leaves names a list that no longer exists,
 * whose id is never given again (AUTOINCREMENT, src/db/id-ranges.ts): it
 * grants nothing of the list, as a publishable key's list grants a deleted
 * list nothing (src/keys/store.ts).
 */
import { clock } from "../core/clock";

/** Ends the collaborations on list `listId` of `accountId` and revokes the invitations to it not yet accepted. */
export async function endListGrants(d1: D1Database, accountId: number, listId: number): Promise<void> {
  await d1.batch([
    d1.prepare("DELETE FROM list_collaborators WHERE account_id = ? AND list_id = ?").bind(accountId, listId),
    d1
      .prepare(
        `UPDATE invitations SET revoked_at = ?
         WHERE account_id = ? AND list_id = ? AND accepted_at IS NULL AND revoked_at IS NULL`,
      )
      .bind(clock.now(), accountId, listId),
  ]);
}
