/**
 * Webhook signing secrets at rest (`webhooks.secret`, `previous_secret`):
 * sealed (src/core/sealed.ts) for their account, so a copy of the database
 * signs nothing. A secret written before secrets were sealed is plain until
 * the scheduled job seals it (src/index.ts), and signs meanwhile as it is;
 * the job also seals again, under the current key, every secret sealed under
 * the previous one, so the secrets outlive the next rotation.
 */
import { seal, sealedPrefix, unseal, type SealingKeys } from "../core/sealed";

const context = (accountId: number) => `webhook secret of account ${accountId}`;

/** A new secret as stored. */
export function sealSecret(keys: SealingKeys, accountId: number, secret: string): Promise<string> {
  return seal(keys, context(accountId), secret);
}

/** A stored secret; null if it was sealed under a key this Worker no longer has. */
export function openSecret(keys: SealingKeys, accountId: number, stored: string): Promise<string | null> {
  return unseal(keys, context(accountId), stored);
}

const BATCH = 100;
/** Webhooks a run of the job visits at most, per database: an hour's run stays short. */
const PER_RUN = 10_000;

type Row = { id: number; account_id: number; secret: string; previous_secret: string | null };

/**
 * The scheduled job's part: seals, under the current key, the secrets that
 * are plain or sealed under the previous key, at most `limit` webhooks a
 * run, a batch of BATCH at a time, each write conditional on the value it
 * replaces (a rotation meanwhile wins). Counts values: a webhook holds one
 * or two. A secret sealed under a key this Worker no longer has stays as it
 * is and is counted `unreadable` (at every run): its webhook fails to deliver
 * until its owner rotates the secret. `more`: the limit stopped the run.
 */
export async function sealWebhookSecrets(
  d1: D1Database,
  keys: SealingKeys,
  limit = PER_RUN,
): Promise<{ sealed: number; unreadable: number; more: boolean }> {
  const current = sealedPrefix(keys.current);
  const outdated = (value: string | null) => value !== null && !value.startsWith(current);
  let sealed = 0;
  let unreadable = 0;
  let after = 0;
  for (let seen = 0; seen < limit;) {
    const take = Math.min(BATCH, limit - seen);
    const { results } = await d1
      .prepare(
        `SELECT id, account_id, secret, previous_secret FROM webhooks
          WHERE id > ?1 AND (substr(secret, 1, ?2) <> ?3 OR substr(previous_secret, 1, ?2) <> ?3)
          ORDER BY id LIMIT ?4`,
      )
      .bind(after, current.length, current, take)
      .all<Row>();
    const updates: D1PreparedStatement[] = [];
    for (const row of results) {
      const [secret, previous] = await Promise.all(
        [row.secret, row.previous_secret].map(async (value) => {
          if (!outdated(value)) return value;
          const plain = await openSecret(keys, row.account_id, value!);
          if (plain === null) {
            unreadable++;
            return value;
          }
          sealed++;
          return sealSecret(keys, row.account_id, plain);
        }),
      );
      if (secret !== row.secret || previous !== row.previous_secret) {
        updates.push(
          d1
            .prepare(
              `UPDATE webhooks SET secret = CASE WHEN secret = ?2 THEN ?3 ELSE secret END,
                previous_secret = CASE WHEN previous_secret IS ?4 THEN ?5 ELSE previous_secret END WHERE id = ?1`,
            )
            .bind(row.id, row.secret, secret, row.previous_secret, previous),
        );
      }
    }
    if (updates.length > 0) await d1.batch(updates);
    seen += results.length;
    after = results.at(-1)?.id ?? after;
    if (results.length < take) return { sealed, unreadable, more: false };
  }
  return { sealed, unreadable, more: true };
}
