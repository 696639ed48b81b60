/**
 * A person's second factor at rest. The TOTP secret is sealed
 * (src/core/sealed.ts) for its person, with the last step a code was
 * accepted for, so a code is never accepted twice: each accepted code writes
 * a new sealed value, conditional on the one it read, so of two requests with
 * one code only one succeeds. Recovery codes are 10 single-use codes of 50
 * random bits, kept only as SHA-256 hashes (high-entropy secrets need no
 * password hashing), and used up by a conditional write as well. After a
 * rotation of the signing key, the scheduled job seals every secret again
 * under the new key (`sealTotpSecrets`), as it does webhooks' secrets.
 */
import { clock } from "../core/clock";
import type { Bindings } from "../core/env";
import { hashSecret } from "../core/secrets";
import { seal, sealedPrefix, sealingKeys, unseal, type SealingKeys } from "../core/sealed";
import { base32Decode, base32Encode, matchingStep } from "./totp";

type TotpState = { secret: string; step: number | null };

const context = (personId: number) => `totp secret of person ${personId}`;

/** A TOTP secret as stored in `people.totp_secret`, with the last step used. */
export async function sealTotp(env: Bindings, personId: number, secret: Uint8Array, step: number | null) {
  const state: TotpState = { secret: base32Encode(secret), step };
  return seal(await sealingKeys(env), context(personId), JSON.stringify(state));
}

async function openTotp(env: Bindings, personId: number, stored: string) {
  const plain = await unseal(await sealingKeys(env), context(personId), stored);
  if (plain === null) return null;
  const state = JSON.parse(plain) as TotpState;
  const secret = base32Decode(state.secret);
  return secret && { secret, step: state.step };
}

/**
 * What `stored` becomes once `code` is accepted (the step it was for recorded), or null when `code` is not
 * the current one, was used already, or the secret cannot be opened (sealed under a key this Worker no
 * longer has). Nothing is written: the caller writes the new value on condition that `stored` is still there.
 */
export async function acceptTotpCode(
  env: Bindings,
  personId: number,
  stored: string,
  code: string,
): Promise<string | null> {
  const totp = await openTotp(env, personId, stored);
  if (!totp) return null;
  const step = await matchingStep(totp.secret, code.replaceAll(" ", ""), clock.now(), totp.step);
  return step === null ? null : sealTotp(env, personId, totp.secret, step);
}

/** Writes what acceptTotpCode returned, if `stored` is still the person's: whether it was. */
export async function recordTotpCode(db: D1Database, personId: number, stored: string, next: string) {
  const written = await db
    .prepare("UPDATE people SET totp_secret = ? WHERE id = ? AND totp_secret = ? RETURNING id")
    .bind(next, personId, stored)
    .first();
  return written !== null;
}

const SEAL_BATCH = 100;

/**
 * The scheduled job's part: seals again, under the current key, the TOTP secrets sealed under another, at
 * most `limit` a run, each write conditional on the value it replaces (a code used meanwhile wins). A
 * secret sealed under a key this Worker no longer has stays, counted `unreadable`: its person signs in with
 * a recovery code and turns TOTP on again. `more`: the limit stopped the run.
 */
export async function sealTotpSecrets(
  db: D1Database,
  keys: SealingKeys,
  limit = 10_000,
): Promise<{ sealed: number; unreadable: number; more: boolean }> {
  const current = sealedPrefix(keys.current);
  let sealed = 0;
  let unreadable = 0;
  let after = 0;
  for (let seen = 0; seen < limit;) {
    const { results } = await db
      .prepare(
        `SELECT id, totp_secret FROM people WHERE id > ?1 AND totp_secret IS NOT NULL
          AND substr(totp_secret, 1, ?2) <> ?3 ORDER BY id LIMIT ?4`,
      )
      .bind(after, current.length, current, Math.min(SEAL_BATCH, limit - seen))
      .all<{ id: number; totp_secret: string }>();
    const updates: D1PreparedStatement[] = [];
    for (const row of results) {
      const plain = await unseal(keys, context(row.id), row.totp_secret);
      if (plain === null) {
        unreadable++;
        continue;
      }
      updates.push(
        db
          .prepare("UPDATE people SET totp_secret = ? WHERE id = ? AND totp_secret = ?")
          .bind(await seal(keys, context(row.id), plain), row.id, row.totp_secret),
      );
      sealed++;
    }
    if (updates.length > 0) await db.batch(updates);
    if (results.length < SEAL_BATCH) return { sealed, unreadable, more: false };
    seen += results.length;
    after = results[results.length - 1]!.id;
  }
  return { sealed, unreadable, more: true };
}

export const RECOVERY_CODE_COUNT = 10;
const CODE_ALPHABET = "abcdefghijklmnopqrstuvwxyz234567";

/** Recovery codes as people see them: `xxxxx-xxxxx`, 10 characters of base32, 50 random bits each. */
export function newRecoveryCodes(): string[] {
  return Array.from({ length: RECOVERY_CODE_COUNT }, () => {
    const chars = [...crypto.getRandomValues(new Uint8Array(10))].map((byte) => CODE_ALPHABET[byte & 31]);
    return `${chars.slice(0, 5).join("")}-${chars.slice(5).join("")}`;
  });
}

/** A code as typed (any case, with or without the dash or spaces), hashed as stored. */
const recoveryCodeHash = (code: string) => hashSecret(code.toLowerCase().replaceAll(/[\s-]/g, ""));

/**
 * Statements that replace the person's recovery codes with `codes`, if by then their stored TOTP secret is
 * `secret` (what the same batch wrote before them, when it did).
 */
export async function replaceRecoveryCodes(
  db: D1Database,
  personId: number,
  codes: readonly string[],
  secret: string,
): Promise<D1PreparedStatement[]> {
  const hashes = await Promise.all(codes.map(recoveryCodeHash));
  const written = "EXISTS (SELECT 1 FROM people WHERE id = ?1 AND totp_secret = ?2)";
  return [
    db.prepare(`DELETE FROM recovery_codes WHERE person_id = ?1 AND ${written}`).bind(personId, secret),
    db
      .prepare(`INSERT INTO recovery_codes (person_id, code_hash) SELECT ?1, value FROM json_each(?3) WHERE ${written}`)
      .bind(personId, secret, JSON.stringify(hashes)),
  ];
}

/** Uses up one of the person's recovery codes: whether `code` was one, unused. */
export async function useRecoveryCode(db: D1Database, personId: number, code: string): Promise<boolean> {
  const used = await db
    .prepare(
      "UPDATE recovery_codes SET used_at = ? WHERE person_id = ? AND code_hash = ? AND used_at IS NULL RETURNING 1",
    )
    .bind(clock.now(), personId, await recoveryCodeHash(code))
    .first();
  return used !== null;
}
