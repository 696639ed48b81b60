/**
 * Whether a list is one of an account's: read on the account's shard, where
 * lists live (the request must have said which account it works for,
 * src/db/client.ts `useAccount`). Collaborators and invitations name lists
 * from the directory, so they check here first.
 */
import { and, eq } from "drizzle-orm";
import { notFound } from "../core/problem";
import { database } from "../db/client";
import { lists } from "../db/schema";

export async function isOwnList(d1: D1Database, accountId: number, listId: number): Promise<boolean> {
  const row = await database(d1)
    .select({ id: lists.id })
    .from(lists)
    .where(and(eq(lists.id, listId), eq(lists.account_id, accountId)))
    .get();
  return row !== undefined;
}

/** 404 unless the list is one of the account's: another account's list is no more than one that does not exist. */
export async function assertOwnList(d1: D1Database, accountId: number, listId: number): Promise<void> {
  if (!(await isOwnList(d1, accountId, listId))) throw notFound("list");
}
