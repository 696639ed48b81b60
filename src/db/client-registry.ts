/**
 * The writes that make, rotate and revoke a client (client credentials), shared by
 * the registration tool (`npm run clients`, scripts/lib/registry.ts, through
 * `wrangler d1 execute`) and the API's /v3.0/clients (src/people/clients/routes.ts),
 * so a client is the same row whichever made it. Secrets come from
 * src/core/secrets.ts and only their hashes are stored; rotating bumps
 * `secret_version`, which the tokens carry, so earlier tokens stop working
 * (src/auth/client-status.ts). Each operation is one `Batch` (one transaction).
 * Imports nothing Worker-only.
 */
import { generateClientId, generateClientSecret, hashSecret } from "../core/secrets.ts";
import type { Batch, Row } from "./id-ranges.ts";

const NOW_MS = "cast(unixepoch('subsec') * 1000 as integer)";

/** A client as stored, with its account's name; never its secret or the secret's hash. */
export type StoredClient = {
  client_id: string;
  account_id: number;
  account: string;
  name: string;
  scope: string;
  secret_version: number;
  revoked_at: number | null;
  created_at: number;
  updated_at: number;
};

/** The client and its account, read in the same batch as a change to it. */
const DESCRIBE = `SELECT c.id AS client_id, c.account_id, a.name AS account, c.name, c.scope, c.secret_version,
    c.revoked_at, c.created_at, c.updated_at
  FROM clients AS c JOIN accounts AS a ON a.id = c.account_id`;

/** The client `clientId`, within `accountId` when one is given (a person's account: another's is no client of theirs). */
function describe(clientId: string, accountId: number | null) {
  return accountId === null
    ? { sql: `${DESCRIBE} WHERE c.id = ?`, params: [clientId] }
    : { sql: `${DESCRIBE} WHERE c.id = ? AND c.account_id = ?`, params: [clientId, accountId] };
}

const within = (accountId: number | null) =>
  accountId === null ? { sql: "", params: [] } : { sql: " AND account_id = ?", params: [accountId] };

function storedClient(row: Row): StoredClient {
  return {
    client_id: String(row.client_id),
    account_id: Number(row.account_id),
    account: String(row.account),
    name: String(row.name),
    scope: String(row.scope),
    secret_version: Number(row.secret_version),
    revoked_at: row.revoked_at === null ? null : Number(row.revoked_at),
    created_at: Number(row.created_at),
    updated_at: Number(row.updated_at),
  };
}

/** An existing account by id, or one by name that is created when missing (on `shard`, docs/scaling.md). */
export type AccountRef = { id: number } | { name: string; shard: string };

export type CreatedClient = { client: StoredClient; secret: string; accountCreated: boolean };

/**
 * Creates a client with a new id and secret in the account; the secret is returned once. Null when the
 * account named by id does not exist. Name and scope are the caller's to validate.
 */
export async function insertClient(
  batch: Batch,
  account: AccountRef,
  input: { name: string; scope: string },
): Promise<CreatedClient | null> {
  const clientId = generateClientId();
  const secret = generateClientSecret();
  const accountOf =
    "id" in account ? { sql: "id = ?", params: [account.id] } : { sql: "name = ?", params: [account.name] };
  const createAccount =
    "id" in account
      ? []
      : [
          {
            sql: "INSERT INTO accounts (name, shard) VALUES (?, ?) ON CONFLICT (name) DO NOTHING RETURNING id",
            params: [account.name, account.shard],
          },
        ];
  const results = await batch([
    ...createAccount,
    {
      sql: `INSERT INTO clients (id, account_id, name, secret_hash, scope)
        SELECT ?, id, ?, ?, ? FROM accounts WHERE ${accountOf.sql}`,
      params: [clientId, input.name, await hashSecret(secret), input.scope, ...accountOf.params],
    },
    describe(clientId, null),
  ]);
  const row = results.at(-1)?.[0];
  const accountCreated = createAccount.length > 0 && (results[0]?.length ?? 0) > 0;
  return row ? { client: storedClient(row), secret, accountCreated } : null;
}

export type Rotation =
  | { kind: "rotated"; client: StoredClient; secret: string }
  | { kind: "revoked"; client: StoredClient }
  | { kind: "unknown" };

/**
 * Gives the client a new secret and bumps its `secret_version`: tokens issued before stop working within
 * src/auth/client-status.ts's cache time. A revoked client keeps its old (unusable) secret.
 */
export async function rotateClientSecret(batch: Batch, clientId: string, accountId: number | null): Promise<Rotation> {
  const secret = generateClientSecret();
  const scoped = within(accountId);
  const [updated = [], described = []] = await batch([
    {
      sql: `UPDATE clients SET secret_hash = ?, secret_version = secret_version + 1, updated_at = ${NOW_MS}
        WHERE id = ? AND revoked_at IS NULL${scoped.sql} RETURNING id`,
      params: [await hashSecret(secret), clientId, ...scoped.params],
    },
    describe(clientId, accountId),
  ]);
  const row = described[0];
  if (!row) return { kind: "unknown" };
  const client = storedClient(row);
  return updated.length > 0 ? { kind: "rotated", client, secret } : { kind: "revoked", client };
}

/** `changed` is false when the client had been revoked before (revoking is idempotent). */
export type Revocation = { kind: "revoked"; client: StoredClient; changed: boolean } | { kind: "unknown" };

/**
 * Revokes the client: the token endpoint refuses it at once, and tokens already issued stop working within
 * src/auth/client-status.ts's cache time.
 */
export async function revokeClient(batch: Batch, clientId: string, accountId: number | null): Promise<Revocation> {
  const scoped = within(accountId);
  const [updated = [], described = []] = await batch([
    {
      sql: `UPDATE clients SET revoked_at = ${NOW_MS}, updated_at = ${NOW_MS}
        WHERE id = ? AND revoked_at IS NULL${scoped.sql} RETURNING id`,
      params: [clientId, ...scoped.params],
    },
    describe(clientId, accountId),
  ]);
  const row = described[0];
  return row ? { kind: "revoked", client: storedClient(row), changed: updated.length > 0 } : { kind: "unknown" };
}
