/**
 * Helpers of the tests of an account's people (members, invitations, collaborators, clients from a
 * session): every page of a collection, and people added to an account directly in the directory.
 */
import { env } from "cloudflare:workers";
import { expect } from "vitest";
import type { Role } from "../src/core/env";
import { BASE, personCaller, type PersonCaller } from "./helpers";

type Page<T> = { results: T[]; next: string | null; previous: string | null };

/** Every item of a collection, following `next` from `path` with `limit` per page; asserts pages are full. */
export async function allPages<T>(who: Pick<PersonCaller, "get">, path: string, limit: number): Promise<T[]> {
  const items: T[] = [];
  let url: string | null = `${path}${path.includes("?") ? "&" : "?"}limit=${limit}`;
  while (url !== null) {
    const response = await who.get(url.startsWith(BASE) ? url.slice(BASE.length) : url);
    expect(response.status, url).toBe(200);
    const page = await response.json<Page<T>>();
    if (page.next !== null) expect(page.results).toHaveLength(limit);
    items.push(...page.results);
    url = page.next;
  }
  return items;
}

/** People with `role` in the account, each with a token of their own. */
export function membersOf(accountId: number, role: Role, count: number): Promise<PersonCaller[]> {
  return Promise.all(Array.from({ length: count }, () => personCaller(role, { accountId })));
}

/** The member's role in the account as stored, or null. */
export async function storedRole(accountId: number, personId: number): Promise<string | null> {
  const row = await env.DB.prepare("SELECT role FROM members WHERE account_id = ? AND person_id = ?")
    .bind(accountId, personId)
    .first<{ role: string }>();
  return row?.role ?? null;
}
