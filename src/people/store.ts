/**
 * People in the directory: found by email key or id, created, renamed, and
 * what they belong to (accounts, as members or as list collaborators), for
 * the session and /v3.0/me answers.
 */
import { count, eq } from "drizzle-orm";
import type { ListRole, Role } from "../core/env";
import { ApiError } from "../core/problem";
import { isUniqueViolation } from "../db/errors";
import { database } from "../db/client";
import { passkeys, people } from "../db/schema";
import { emailKey, normalEmail } from "./email";

export type Person = typeof people.$inferSelect;

/** The person whose address has `key` (./email.ts `emailKey`), if any. */
export function personByEmailKey(d1: D1Database, key: string): Promise<Person | undefined> {
  return database(d1).select().from(people).where(eq(people.email_key, key)).get();
}

export function personById(d1: D1Database, id: number): Promise<Person | undefined> {
  return database(d1).select().from(people).where(eq(people.id, id)).get();
}

/**
 * A new person (what invitations and `npm run people -- create` make); 409 `conflict` if the address is
 * someone's already, whatever its case. `passwordHash` from ./passwords.ts, or null for passkeys only.
 */
export async function createPerson(
  d1: D1Database,
  values: { email: string; name: string; passwordHash: string | null },
): Promise<Person> {
  try {
    return await database(d1)
      .insert(people)
      .values({
        email: normalEmail(values.email),
        email_key: emailKey(values.email),
        name: values.name,
        password_hash: values.passwordHash,
      })
      .returning()
      .get();
  } catch (error) {
    if (isUniqueViolation(error)) throw new ApiError("conflict", "A person with this email address exists already.");
    throw error;
  }
}

export async function renamePerson(d1: D1Database, id: number, name: string, now: number): Promise<void> {
  await database(d1)
    .update(people)
    .set({ name, updated_at: new Date(now) })
    .where(eq(people.id, id));
}

export type AccountOfPerson = { id: number; name: string; role: Role | null };

/**
 * The accounts a person acts in, by id: those they are a member of, with their role, and those where they
 * only collaborate on lists, with `role` null.
 */
export async function accountsOf(d1: D1Database, personId: number): Promise<AccountOfPerson[]> {
  const { results } = await d1
    .prepare(
      `SELECT a.id, a.name, m.role FROM members m JOIN accounts a ON a.id = m.account_id WHERE m.person_id = ?1
       UNION
       SELECT DISTINCT a.id, a.name, NULL FROM list_collaborators l JOIN accounts a ON a.id = l.account_id
        WHERE l.person_id = ?1 AND NOT EXISTS (SELECT 1 FROM members m WHERE m.person_id = ?1 AND m.account_id = a.id)
       ORDER BY 1`,
    )
    .bind(personId)
    .all<AccountOfPerson>();
  return results;
}

export type Collaboration = { account_id: number; list_id: number; role: ListRole };

/** The lists a person was given without being a member of their account, by account and list. */
export async function collaborationsOf(d1: D1Database, personId: number): Promise<Collaboration[]> {
  const { results } = await d1
    .prepare(
      "SELECT account_id, list_id, role FROM list_collaborators WHERE person_id = ? ORDER BY account_id, list_id",
    )
    .bind(personId)
    .all<Collaboration>();
  return results;
}

export async function passkeyCount(d1: D1Database, personId: number): Promise<number> {
  const row = await database(d1).select({ n: count() }).from(passkeys).where(eq(passkeys.person_id, personId)).get();
  return row?.n ?? 0;
}
