/**
 * The registration tool's operations on the `accounts` and `clients` tables:
 * create a client (and its account when missing), list, rotate a secret,
 * revoke. The writes are the Worker's own (src/db/client-registry.ts, which
 * /v3.0/clients runs too), scopes come from src/core/scopes.ts, and only a
 * secret's hash is stored.
 *
 * Each operation is a short list of SQL statements run in one round trip by
 * an `Execute` function: `wrangler d1 execute` for the command line (see
 * wrangler.ts), a D1 binding in the tests. `wrangler d1 execute` cannot bind
 * parameters, so every value is written as an escaped SQL literal.
 * This module imports nothing from Node so the tests can run it in workerd.
 */
import { SCOPES } from "../../src/core/scopes.ts";
import { hashSecret } from "../../src/core/secrets.ts";
import { insertClient, revokeClient as revokeStored, rotateClientSecret } from "../../src/db/client-registry.ts";
import type { Batch, Statement } from "../../src/db/id-ranges.ts";
import { literal } from "./backup.ts";

export type Row = Record<string, unknown>;

/** Runs the statements in order, atomically; returns the rows of each. */
export type Execute = (statements: readonly string[]) => Promise<Row[][]>;

/** A mistake in what was asked (exit code 2), as opposed to a failure while doing it. */
export class UsageError extends Error {
  override name = "UsageError";
}

/** The request was understood but cannot be carried out (exit code 1): unknown client, revoked client. */
export class RegistryError extends Error {
  override name = "RegistryError";
}

/** The scopes a client may hold: the ones the token endpoint grants. */
export { SCOPES };

/** A SQL string literal: single quotes doubled (the only escape SQLite strings have). */
export function sqlString(value: string): string {
  return `'${value.replaceAll("'", "''")}'`;
}

/** A statement with its parameters written in as literals, for `wrangler d1 execute`, which binds none. */
export function inlined({ sql, params }: Statement): string {
  let index = 0;
  return sql.replace(/\?/g, () => literal(params[index++]));
}

/** An `Execute` as a `Batch` (src/db/id-ranges.ts): the Worker's parameterized statements, inlined. */
export const batchOf =
  (execute: Execute): Batch =>
  (statements) =>
    execute(statements.map(inlined));

/** Space-separated scopes, validated, deduplicated and in canonical order ("read write"). */
export function parseScope(text: string): string {
  const requested = text.split(/[\s,]+/).filter(Boolean);
  const unknown = requested.filter((s) => !(SCOPES as readonly string[]).includes(s));
  if (unknown.length > 0) {
    throw new UsageError(`Unknown scope ${unknown.map((s) => `"${s}"`).join(", ")}; allowed: ${SCOPES.join(", ")}.`);
  }
  if (requested.length === 0) throw new UsageError(`The scope must name at least one of: ${SCOPES.join(", ")}.`);
  return SCOPES.filter((s) => requested.includes(s)).join(" ");
}

/** A display name for an account or client: trimmed, 1 to 200 characters, no control characters. */
export function parseName(text: string, what: string): string {
  const value = text.trim();
  if (value.length === 0) throw new UsageError(`The ${what} must not be empty.`);
  if (value.length > 200) throw new UsageError(`The ${what} must be at most 200 characters.`);
  if (/\p{Cc}/u.test(value)) throw new UsageError(`The ${what} must not contain control characters.`);
  return value;
}

/** A client id as given on the command line; the lookup decides whether it exists. */
export function parseClientId(text: string | undefined): string {
  const value = text?.trim() ?? "";
  if (value.length === 0) throw new UsageError("Name the client: give its CLIENT_ID.");
  if (value.length > 200 || /\p{Cc}/u.test(value)) throw new UsageError(`"${value}" is not a client id.`);
  return value;
}

const iso = (ms: unknown) => (typeof ms === "number" ? new Date(ms).toISOString() : null);

export type CreatedClient = {
  client_id: string;
  client_secret: string;
  account: string;
  account_id: number;
  account_created: boolean;
  name: string;
  scope: string;
  created_at: string | null;
};

/**
 * Creates a client for `account`, creating the account first if it does not
 * exist. Both inserts run in one atomic batch. The secret is returned once;
 * only its hash is stored.
 */
export async function createClient(
  execute: Execute,
  input: { account: string; name: string; scope: string; shard?: string },
): Promise<CreatedClient> {
  const account = parseName(input.account, "account name");
  const name = parseName(input.name, "client name");
  const scope = parseScope(input.scope);
  // A new account's content goes to `shard` (docs/scaling.md); scripts/lib/shards.ts gives the shard its row.
  const created = await insertClient(batchOf(execute), { name: account, shard: input.shard ?? "DB" }, { name, scope });
  if (!created) throw new RegistryError(`The client could not be created for account "${account}".`);
  return {
    client_id: created.client.client_id,
    client_secret: created.secret,
    account,
    account_id: created.client.account_id,
    account_created: created.accountCreated,
    name,
    scope,
    created_at: iso(created.client.created_at),
  };
}

export type ClientSummary = {
  client_id: string;
  name: string;
  scope: string;
  secret_version: number;
  revoked: boolean;
  revoked_at: string | null;
  created_at: string | null;
  updated_at: string | null;
};

export type AccountSummary = { id: number; name: string; created_at: string | null; clients: ClientSummary[] };

/** Every account (or the one named) with its clients, oldest first. Never a secret or its hash. */
export async function listClients(execute: Execute, filter: { account?: string } = {}): Promise<AccountSummary[]> {
  const where =
    filter.account === undefined ? "" : `WHERE a.name = ${sqlString(parseName(filter.account, "account name"))}`;
  const [rows = []] = await execute([
    `SELECT a.id AS account_id, a.name AS account, a.created_at AS account_created_at,
            c.id AS client_id, c.name, c.scope, c.secret_version, c.revoked_at, c.created_at, c.updated_at
     FROM accounts AS a LEFT JOIN clients AS c ON c.account_id = a.id
     ${where}
     ORDER BY a.id, c.created_at, c.id`,
  ]);
  if (filter.account !== undefined && rows.length === 0) {
    throw new RegistryError(`There is no account named "${filter.account.trim()}".`);
  }
  const accounts = new Map<number, AccountSummary>();
  for (const row of rows) {
    const id = Number(row.account_id);
    let account = accounts.get(id);
    if (!account) {
      account = { id, name: String(row.account), created_at: iso(row.account_created_at), clients: [] };
      accounts.set(id, account);
    }
    if (row.client_id === null) continue;
    account.clients.push({
      client_id: String(row.client_id),
      name: String(row.name),
      scope: String(row.scope),
      secret_version: Number(row.secret_version),
      revoked: row.revoked_at !== null,
      revoked_at: iso(row.revoked_at),
      created_at: iso(row.created_at),
      updated_at: iso(row.updated_at),
    });
  }
  return [...accounts.values()];
}

function unknownClient(clientId: string): RegistryError {
  return new RegistryError(`There is no client with id "${clientId}". See: npm run clients -- list`);
}

export type RotatedClient = {
  client_id: string;
  client_secret: string;
  account: string;
  scope: string;
  secret_version: number;
};

/**
 * Gives the client a new secret and bumps its `secret_version`, so tokens
 * issued before the rotation stop working (within the Worker's 60-second
 * client-status cache). A revoked client cannot be rotated.
 */
export async function rotateSecret(execute: Execute, rawClientId: string): Promise<RotatedClient> {
  const clientId = parseClientId(rawClientId);
  const rotation = await rotateClientSecret(batchOf(execute), clientId, null);
  if (rotation.kind === "unknown") throw unknownClient(clientId);
  const { client } = rotation;
  if (rotation.kind === "revoked") {
    throw new RegistryError(`The client "${clientId}" was revoked on ${iso(client.revoked_at)}; create a new one.`);
  }
  return {
    client_id: clientId,
    client_secret: rotation.secret,
    account: client.account,
    scope: client.scope,
    secret_version: client.secret_version,
  };
}

export type RevokedClient = {
  client_id: string;
  account: string;
  scope: string;
  revoked_at: string;
  /** False when the client had already been revoked earlier (revoking is idempotent). */
  changed: boolean;
};

/**
 * Revokes the client: the token endpoint refuses it at once, and tokens
 * already issued stop working within the Worker's 60-second client-status cache.
 */
export async function revokeClient(execute: Execute, rawClientId: string): Promise<RevokedClient> {
  const clientId = parseClientId(rawClientId);
  const revocation = await revokeStored(batchOf(execute), clientId, null);
  if (revocation.kind === "unknown") throw unknownClient(clientId);
  const { client, changed } = revocation;
  return {
    client_id: clientId,
    account: client.account,
    scope: client.scope,
    revoked_at: iso(client.revoked_at)!,
    changed,
  };
}

/** True when the client exists, is not revoked and `secret` is its current secret. */
export async function clientAccepts(execute: Execute, clientId: string, secret: string): Promise<boolean> {
  const [rows = []] = await execute([
    `SELECT secret_hash FROM clients WHERE id = ${sqlString(clientId)} AND revoked_at IS NULL`,
  ]);
  return rows.length === 1 && rows[0]!.secret_hash === (await hashSecret(secret));
}
