/**
 * Storage of idempotency keys (table `idempotency_keys`, db/schema.ts). A key
 * is claimed, then finished with the response, or released when the request
 * failed on our side so that a retry runs it again. Claim and read are one D1
 * batch, so two requests with one key can never both claim it.
 */
/** A response as replayed: status, the headers that matter, body text. */
export type StoredResponse = { status: number; headers: [string, string][]; body: string };

export type Claim =
  | { outcome: "claimed" }
  | { outcome: "replay"; response: StoredResponse }
  | { outcome: "reused" }
  | { outcome: "in_flight" };

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

export async function claimKey(
  d1: D1Database,
  key: { accountId: number; key: string; fingerprint: string },
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
  return {
    outcome: "replay",
    response: { status: row.status, headers: JSON.parse(row.headers ?? "[]"), body: row.body ?? "" },
  };
}

/** Stores the response of the request that holds the key. */
export async function finishKey(
  d1: D1Database,
  key: { accountId: number; key: string; fingerprint: string },
  response: StoredResponse,
): Promise<void> {
  await d1
    .prepare(
      "UPDATE idempotency_keys SET status = ?4, headers = ?5, body = ?6 WHERE account_id = ?1 AND key = ?2 AND fingerprint = ?3 AND status IS NULL",
    )
    .bind(key.accountId, key.key, key.fingerprint, response.status, JSON.stringify(response.headers), response.body)
    .run();
}

/** Frees a key whose request failed on our side, so a retry runs it again. */
export async function releaseKey(
  d1: D1Database,
  key: { accountId: number; key: string; fingerprint: string },
): Promise<void> {
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
