/**
 * Storage of idempotency keys (table `idempotency_keys`, db/schema.ts). A key
 * is claimed, then finished with the response, or released when the request
 * failed on our side so that a retry runs it again. Claim and read are one D1
 * batch, so two requests with one key can never both claim it.
 *
 * A response's body is stored sealed (core/sealed.ts) for its account and
 * key: an answer may carry a secret (a publishable key, a webhook's signing
 * secret), and a copy of the database must reveal none.
 */
import { seal, sealedPrefix, unseal, type SealingKeys } from "../core/sealed";

/** A response as replayed: status, the headers that matter, body text. */
export type StoredResponse = { status: number; headers: [string, string][]; body: string };

export type Claim =
  | { outcome: "claimed" }
  | { outcome: "replay"; response: StoredResponse }
  | { outcome: "reused" }
  | { outcome: "in_flight" }
  | { outcome: "unreadable" };

type KeyOf = { accountId: number; key: string; fingerprint: string };

/** What a stored body is sealed for: the account and key (keys hold no space), whose replay it is. */
const context = (accountId: number, key: string) => `idempotent answer of account ${accountId} key ${key}`;

/**
 * A request claims a key when it is new, expired (`expiresAt` passed), or held by a request that
 * started before `abandonedBefore` and never finished (its Worker died).
 */
const CLAIM = `
  INSERT INTO idempotency_keys (account_id, key, fingerprint, created_at, expires_at) VALUES (?1, ?2, ?3, ?4, ?5)
  ON CONFLICT (account_id, key) DO UPDATE SET
    fingerprint = excluded.fingerprint, status = NULL, headers = NULL, body = NULL,
    created_at = excluded.created_at, expires_at = excluded.expires_at
  WHERE idempotency_keys.expires_at <= ?4 OR (idempotency_keys.status IS NULL AND idempotency_keys.created_at <= ?6)
  RETURNING 1 AS claimed`;

const READ = "SELECT fingerprint, status, headers, body FROM idempotency_keys WHERE account_id = ?1 AND key = ?2";

type Row = { fingerprint: string; status: number | null; headers: string | null; body: string | null };

/**
 * Claims the key, or says why not; a finished key's response, opened
 * (`unreadable` if it was sealed under a signing key this Worker no longer has).
 */
export async function claimKey(
  d1: D1Database,
  keys: SealingKeys,
  key: KeyOf,
  times: { now: number; expiresAt: number; abandonedBefore: number },
): Promise<Claim> {
  const [claimed, read] = await d1.batch([
    d1.prepare(CLAIM).bind(key.accountId, key.key, key.fingerprint, times.now, times.expiresAt, times.abandonedBefore),
    d1.prepare(READ).bind(key.accountId, key.key),
  ]);
  if (claimed!.results.length > 0) return { outcome: "claimed" };
  const row = (read!.results as Row[])[0];
  // Released between the two statements of another batch is impossible: this batch is one transaction.
  if (!row || row.fingerprint !== key.fingerprint) return { outcome: "reused" };
  if (row.status === null) return { outcome: "in_flight" };
  const body = await unseal(keys, context(key.accountId, key.key), row.body ?? "");
  if (body === null) return { outcome: "unreadable" };
  return { outcome: "replay", response: { status: row.status, headers: JSON.parse(row.headers ?? "[]"), body } };
}

/** Stores the response of the request that holds the key, its body sealed. */
export async function finishKey(
  d1: D1Database,
  keys: SealingKeys,
  key: KeyOf,
  response: StoredResponse,
): Promise<void> {
  const body = await seal(keys, context(key.accountId, key.key), response.body);
  await d1
    .prepare(
      "UPDATE idempotency_keys SET status = ?4, headers = ?5, body = ?6 WHERE account_id = ?1 AND key = ?2 AND fingerprint = ?3 AND status IS NULL",
    )
    .bind(key.accountId, key.key, key.fingerprint, response.status, JSON.stringify(response.headers), body)
    .run();
}

/** Frees a key whose request failed on our side, so a retry runs it again. */
export async function releaseKey(d1: D1Database, key: KeyOf): Promise<void> {
  await d1
    .prepare("DELETE FROM idempotency_keys WHERE account_id = ?1 AND key = ?2 AND fingerprint = ?3 AND status IS NULL")
    .bind(key.accountId, key.key, key.fingerprint)
    .run();
}

/** Deletes expired keys (the scheduled job); returns how many. */
export async function deleteExpiredKeys(d1: D1Database, now: number): Promise<number> {
  const result = await d1.prepare("DELETE FROM idempotency_keys WHERE expires_at <= ?").bind(now).run();
  return result.meta.changes;
}

const BATCH = 100;
/** Rows of each kind a run of the job seals at most, per database: an hour's run stays short. */
const PER_RUN = 10_000;

type StoredRow = { account_id: number; key: string; fingerprint: string; body: string };

/**
 * Bodies stored before bodies were sealed. The same condition, written the
 * same way, defines `idempotency_keys_plain_idx` (db/schema.ts), which holds
 * exactly these rows: finding them reads nothing once there are none.
 */
const PLAIN = "substr(body, 1, 10) <> 'sealed:v1:'";

/** Seals each row's body under the current key, unless the row changed since it was read. */
async function sealRows(d1: D1Database, keys: SealingKeys, rows: StoredRow[]): Promise<number> {
  const updates: D1PreparedStatement[] = [];
  for (const row of rows) {
    const plain = await unseal(keys, context(row.account_id, row.key), row.body);
    if (plain === null) continue;
    const body = await seal(keys, context(row.account_id, row.key), plain);
    updates.push(
      d1
        .prepare(
          "UPDATE idempotency_keys SET body = ?5 WHERE account_id = ?1 AND key = ?2 AND fingerprint = ?3 AND body = ?4",
        )
        .bind(row.account_id, row.key, row.fingerprint, row.body, body),
    );
  }
  if (updates.length > 0) await d1.batch(updates);
  return updates.length;
}

/**
 * The scheduled job's part: seals, under the current key, the stored bodies
 * that are plain (stored before bodies were sealed) and, while a previous
 * signing key is configured, those sealed under it, so that rotating the key
 * twice within a record's 24 hours leaves it readable. At most `limit` rows
 * of each kind a run, BATCH at a time; `more`: the limit stopped the run.
 */
export async function sealStoredAnswers(
  d1: D1Database,
  keys: SealingKeys,
  limit = PER_RUN,
): Promise<{ sealed: number; more: boolean }> {
  let sealed = 0;
  let more = true;
  for (let seen = 0; seen < limit;) {
    const take = Math.min(BATCH, limit - seen);
    const { results } = await d1
      .prepare(`SELECT account_id, key, fingerprint, body FROM idempotency_keys WHERE ${PLAIN} LIMIT ?`)
      .bind(take)
      .all<StoredRow>();
    sealed += await sealRows(d1, keys, results);
    seen += results.length;
    if (results.length < take) {
      more = false;
      break;
    }
  }
  if (!keys.previous) return { sealed, more };
  const previous = sealedPrefix(keys.previous);
  let after: [number, string] = [0, ""];
  for (let seen = 0; seen < limit;) {
    const take = Math.min(BATCH, limit - seen);
    const { results } = await d1
      .prepare(
        `SELECT account_id, key, fingerprint, body FROM idempotency_keys
          WHERE (account_id, key) > (?1, ?2) AND substr(body, 1, ?3) = ?4 ORDER BY account_id, key LIMIT ?5`,
      )
      .bind(...after, previous.length, previous, take)
      .all<StoredRow>();
    sealed += await sealRows(d1, keys, results);
    seen += results.length;
    const last = results.at(-1);
    if (last) after = [last.account_id, last.key];
    if (results.length < take) return { sealed, more };
  }
  return { sealed, more: true };
}
