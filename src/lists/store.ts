/**
 * Lists in D1: create, get, update (partial), delete and page, every one
 * scoped to the caller's account. Deleting a list deletes its memberships
 * (foreign key cascade), not its pinpoints; membership batches are in
 * membership.ts.
 */
import { ownedRows } from "../db/owned";
import { lists } from "../db/schema";

export const listRows = ownedRows(lists, { what: "list" });
