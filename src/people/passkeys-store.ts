/**
 * People's passkeys in D1 (the directory): each person's own, read, added,
 * renamed and deleted only through their person id, so nobody reaches another
 * person's passkey, not even to learn that its id exists (404). The rules
 * that must hold however many requests run at once are each one statement:
 * at most MAX_PASSKEYS per person, never deleting the last way a person
 * without a password signs in, and a signature counter that only grows.
 */
import { and, eq } from "drizzle-orm";
import { ApiError, notFound } from "../core/problem";
import { database } from "../db/client";
import { rowMapper } from "../db/search/raw-rows";
import { passkeys } from "../db/schema";

export type Passkey = typeof passkeys.$inferSelect;

/** Enough for every device and security key a person uses; each is listed whenever they register another. */
export const MAX_PASSKEYS = 20;

const WHAT = "passkey";
const toPasskey = rowMapper(passkeys);

export type NewPasskey = {
  id: string;
  personId: number;
  name: string;
  /** The COSE public key, base64url. */
  publicKey: string;
  counter: number;
  transports: string[];
};

/** The person a registration is for (their email and name label the passkey) and the passkeys they have. */
export async function registrant(
  db: D1Database,
  personId: number,
): Promise<{ person: { id: number; email: string; name: string }; passkeys: Passkey[] }> {
  const [person, rows] = await db.batch<Record<string, unknown>>([
    db.prepare("SELECT id, email, name FROM people WHERE id = ?").bind(personId),
    db.prepare("SELECT * FROM passkeys WHERE person_id = ? ORDER BY created_at, id").bind(personId),
  ]);
  const found = person!.results[0] as { id: number; email: string; name: string } | undefined;
  // The session's person: the sessions row goes with the person (ON DELETE CASCADE).
  if (!found) throw notFound("person");
  return { person: found, passkeys: rows!.results.map(toPasskey) };
}

/** Stores a verified passkey; 409 when it is registered already or the person has MAX_PASSKEYS. */
export async function insertPasskey(db: D1Database, passkey: NewPasskey): Promise<Passkey> {
  const inserted = await db
    .prepare(
      `INSERT INTO passkeys (id, person_id, name, public_key, counter, transports)
      SELECT ?1, ?2, ?3, ?4, ?5, ?6 WHERE (SELECT count(*) FROM passkeys WHERE person_id = ?2) < ?7
      ON CONFLICT (id) DO NOTHING
      RETURNING *`,
    )
    .bind(
      passkey.id,
      passkey.personId,
      passkey.name,
      passkey.publicKey,
      passkey.counter,
      JSON.stringify(passkey.transports),
      MAX_PASSKEYS,
    )
    .first<Record<string, unknown>>();
  if (inserted) return toPasskey(inserted);
  const existing = await db.prepare("SELECT 1 FROM passkeys WHERE id = ?").bind(passkey.id).first();
  throw new ApiError(
    "conflict",
    existing
      ? "This passkey is registered already."
      : `You have ${MAX_PASSKEYS} passkeys, the most one person may have: delete one you no longer use first.`,
  );
}

/** Renames one of the person's passkeys; 404 if they have none with this id. */
export async function renamePasskey(db: D1Database, personId: number, id: string, name: string): Promise<Passkey> {
  const [renamed] = await database(db)
    .update(passkeys)
    .set({ name })
    .where(and(eq(passkeys.id, id), eq(passkeys.person_id, personId)))
    .returning();
  if (!renamed) throw notFound(WHAT);
  return renamed;
}

/**
 * Deletes one of the person's passkeys, unless it is their last one and they have no password: they could
 * not sign in again (409 `last_credential`). One statement, so two deletes at once cannot both pass the
 * rule and leave the person with nothing. 404 if they have no passkey with this id.
 */
export async function deletePasskey(db: D1Database, personId: number, id: string): Promise<void> {
  const [deleted, exists] = await db.batch([
    db
      .prepare(
        `DELETE FROM passkeys WHERE id = ?1 AND person_id = ?2
          AND (EXISTS (SELECT 1 FROM people WHERE id = ?2 AND password_hash IS NOT NULL)
            OR (SELECT count(*) FROM passkeys WHERE person_id = ?2) > 1)
        RETURNING id`,
      )
      .bind(id, personId),
    db.prepare("SELECT 1 FROM passkeys WHERE id = ? AND person_id = ?").bind(id, personId),
  ]);
  if (deleted!.results.length > 0) return;
  if (exists!.results.length === 0) throw notFound(WHAT);
  throw new ApiError(
    "last_credential",
    "This is your only passkey and you have no password: without it you could not sign in again. " +
      "Register another passkey or set a password first.",
  );
}

/** The statement that reads the passkey an assertion names, whoever's it is. */
export function passkeyById(db: D1Database, id: string): D1PreparedStatement {
  return db.prepare("SELECT * FROM passkeys WHERE id = ?").bind(id);
}

export const passkeyOfRow = toPasskey;

/**
 * Records a sign-in with the passkey: its new signature counter and when. Only if the counter is still the
 * one the signature was checked against (false otherwise): of two sign-ins with one counter value, one wins.
 */
export async function recordSignIn(
  db: D1Database,
  passkey: Pick<Passkey, "id" | "counter">,
  newCounter: number,
  now: number,
): Promise<boolean> {
  const result = await db
    .prepare("UPDATE passkeys SET counter = ?, last_used_at = ? WHERE id = ? AND counter = ?")
    .bind(newCounter, now, passkey.id, passkey.counter)
    .run();
  return result.meta.changes === 1;
}
