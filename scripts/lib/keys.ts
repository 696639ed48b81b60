/**
 * The registration tool's operations on publishable keys (the
 * `publishable_keys` and `publishable_key_lists` tables): create a key for an
 * existing account, list keys, revoke one. The rows are the ones the API's
 * POST /v3.0/keys writes (src/keys/store.ts): the key is generated and hashed
 * by src/core/secrets.ts, origins are checked by src/core/publishable-keys.ts, and only
 * the hash is stored.
 *
 * Like registry.ts, every operation is one atomic run of statements through
 * an `Execute`, with values written as SQL literals, and this module imports
 * nothing from Node so the tests can run it in workerd.
 */
import * as z from "zod";
import {
  isOriginPattern,
  KEY_PREFIX_LENGTH,
  MAX_KEY_LISTS,
  MAX_KEY_ORIGINS,
  MAX_ORIGIN_LENGTH,
} from "../../src/core/publishable-keys.ts";
import { generatePublishableKey, hashSecret } from "../../src/core/secrets.ts";
import { parseName, RegistryError, sqlString, UsageError, type Execute } from "./registry.ts";

/** The API's rule for `expires_at`: an ISO 8601 date and time with an offset (`Z` or `+02:00`). */
const instant = z.iso.datetime({ offset: true });

const EXAMPLE_ORIGINS = "https://maps.example.com, http://localhost:5173 or https://*.example.org";

/** A positive integer id as given on the command line, checked before it is written into SQL. */
function parseId(text: string, what: string): number {
  const value = text.trim();
  const id = /^[0-9]+$/.test(value) ? Number(value) : NaN;
  if (!Number.isSafeInteger(id) || id < 1) throw new UsageError(`"${text}" is not a ${what} (a positive integer).`);
  return id;
}

/** A key id as given on the command line; the lookup decides whether it exists. */
export function parseKeyId(text: string | undefined): number {
  if (text === undefined || text.trim() === "") throw new UsageError("Name the key: give its KEY_ID.");
  return parseId(text, "key id");
}

/** List ids, deduplicated in the order given (as the API does). */
export function parseListIds(texts: readonly string[]): number[] {
  if (texts.length === 0) throw new UsageError("Name at least one list, or leave out --list to publish every list.");
  const ids = [...new Set(texts.map((text) => parseId(text, "list id")))];
  if (ids.length > MAX_KEY_LISTS) {
    throw new UsageError(`A key may name at most ${MAX_KEY_LISTS} lists; leave out --list to publish every list.`);
  }
  return ids;
}

/** Origins checked by the API's own rule (src/core/publishable-keys.ts), deduplicated in the order given. */
export function parseOrigins(texts: readonly string[]): string[] {
  if (texts.length === 0) throw new UsageError("Name at least one origin, or leave out --origin to allow any.");
  for (const text of texts) {
    if (text.length > MAX_ORIGIN_LENGTH || !isOriginPattern(text)) {
      throw new UsageError(
        `"${text}" is not an origin: give one such as ${EXAMPLE_ORIGINS} (scheme, host and port only, at most ${MAX_ORIGIN_LENGTH} characters).`,
      );
    }
  }
  const origins = [...new Set(texts)];
  if (origins.length > MAX_KEY_ORIGINS) throw new UsageError(`A key may name at most ${MAX_KEY_ORIGINS} origins.`);
  return origins;
}

/** An expiry: an ISO 8601 instant with an offset, after `now`; returned in milliseconds. */
export function parseExpiry(text: string, now = Date.now()): number {
  if (!instant.safeParse(text).success) {
    throw new UsageError(
      `"${text}" is not an ISO 8601 date and time with an offset, such as 2030-01-31T18:00:00Z or 2030-01-31T19:00:00+01:00.`,
    );
  }
  const ms = Date.parse(text);
  if (ms <= now) throw new UsageError(`The expiry ${new Date(ms).toISOString()} is not in the future.`);
  return ms;
}

const iso = (ms: unknown) => (ms === null || ms === undefined ? null : new Date(Number(ms)).toISOString());

/** A key as listed (the API's fields, src/keys/json.ts, and the account): never the key or its hash. */
export type KeySummary = {
  id: number;
  account: string;
  name: string;
  key_prefix: string;
  /** null: every list of the account, now and later. */
  lists: number[] | null;
  /** null: any origin. */
  origins: string[] | null;
  expires_at: string | null;
  created_at: string;
};

/** The fields of the API's 201 answer (CreatedPublishableKey): the listing's, the key, and the account's id. */
export type CreatedKey = KeySummary & { key: string; account_id: number };

/**
 * Creates a publishable key for an existing account: for the lists named
 * (every list of the account, now and later, when none is), from the origins
 * named (any when none is), until `expires` (never when absent). The key row
 * and its list rows are written only if the account exists and owns every
 * list named, checked by the same statements that write them, so a refusal
 * writes nothing. The key is returned once; only its hash is stored.
 */
export async function createKey(
  execute: Execute,
  input: { account: string; name: string; lists?: readonly string[]; origins?: readonly string[]; expires?: string },
): Promise<CreatedKey> {
  const account = parseName(input.account, "account name");
  const name = parseName(input.name, "key name");
  // As in the API, absent means unlimited and an empty list is a mistake.
  const listIds = input.lists === undefined ? [] : parseListIds(input.lists);
  const everyList = input.lists === undefined;
  const origins = input.origins === undefined ? null : parseOrigins(input.origins);
  const expiresAt = input.expires === undefined ? null : parseExpiry(input.expires);

  const key = generatePublishableKey();
  const keyHash = sqlString(await hashSecret(key));
  const accountName = sqlString(account);
  const ids = sqlString(JSON.stringify(listIds));
  const ownedLists = `FROM lists WHERE account_id = a.id AND id IN (SELECT value FROM json_each(${ids}))`;
  const [inserted = [], , described = []] = await execute([
    `INSERT INTO publishable_keys (account_id, name, key_hash, key_prefix, every_list, origins, expires_at)
     SELECT a.id, ${sqlString(name)}, ${keyHash}, ${sqlString(key.slice(0, KEY_PREFIX_LENGTH))}, ${everyList ? 1 : 0},
            ${origins === null ? "NULL" : sqlString(JSON.stringify(origins))}, ${expiresAt ?? "NULL"}
     FROM accounts AS a
     WHERE a.name = ${accountName} AND (SELECT count(*) ${ownedLists}) = ${listIds.length}
     RETURNING id, account_id, created_at`,
    // Joined to the key row by its hash: no key row, no list rows.
    `INSERT INTO publishable_key_lists (key_id, list_id)
     SELECT k.id, j.value FROM publishable_keys AS k, json_each(${ids}) AS j
     WHERE k.key_hash = ${keyHash}`,
    `SELECT a.id, (SELECT json_group_array(id) ${ownedLists}) AS owned
     FROM accounts AS a WHERE a.name = ${accountName}`,
  ]);
  const row = inserted[0];
  if (!row) {
    const found = described[0];
    if (!found) {
      throw new RegistryError(
        `There is no account named "${account}"; create it with a client first: npm run clients -- create --account NAME`,
      );
    }
    const owned = new Set(JSON.parse(String(found.owned)) as number[]);
    const foreign = listIds.filter((id) => !owned.has(id));
    throw new RegistryError(
      foreign.length === 0
        ? `The key could not be created for account "${account}".`
        : `${foreign.length === 1 ? "List" : "Lists"} ${foreign.join(", ")} ${foreign.length === 1 ? "is not a list" : "are not lists"} of account "${account}"; no key was created.`,
    );
  }
  return {
    id: Number(row.id),
    key,
    name,
    key_prefix: key.slice(0, KEY_PREFIX_LENGTH),
    lists: everyList ? null : listIds,
    origins,
    expires_at: iso(expiresAt),
    created_at: iso(row.created_at)!,
    account,
    account_id: Number(row.account_id),
  };
}

/** Every key (or the named account's), by account, oldest first. */
export async function listKeys(execute: Execute, filter: { account?: string } = {}): Promise<KeySummary[]> {
  const account = filter.account === undefined ? undefined : parseName(filter.account, "account name");
  const [rows = [], accounts = []] = await execute([
    `SELECT k.id, a.name AS account, k.name, k.key_prefix, k.every_list, k.origins, k.expires_at, k.created_at,
            (SELECT json_group_array(list_id)
             FROM (SELECT list_id FROM publishable_key_lists WHERE key_id = k.id ORDER BY list_id)) AS lists
     FROM publishable_keys AS k JOIN accounts AS a ON a.id = k.account_id
     ${account === undefined ? "" : `WHERE a.name = ${sqlString(account)}`}
     ORDER BY k.account_id, k.id`,
    ...(account === undefined ? [] : [`SELECT id FROM accounts WHERE name = ${sqlString(account)}`]),
  ]);
  if (account !== undefined && accounts.length === 0)
    throw new RegistryError(`There is no account named "${account}".`);
  return rows.map((row) => ({
    id: Number(row.id),
    account: String(row.account),
    name: String(row.name),
    key_prefix: String(row.key_prefix),
    lists: row.every_list ? null : (JSON.parse(String(row.lists)) as number[]),
    origins: row.origins === null ? null : (JSON.parse(String(row.origins)) as string[]),
    expires_at: iso(row.expires_at),
    created_at: iso(row.created_at)!,
  }));
}

export type RevokedKey = { id: number; account: string; name: string; key_prefix: string };

/**
 * Revokes a key by deleting it, as the API does: it stops working within
 * seconds. Its list rows are deleted in the same run rather than left to the
 * foreign key's cascade, so no row outlives its key whatever the connection's
 * foreign-key setting.
 */
export async function revokeKey(execute: Execute, rawId: string): Promise<RevokedKey> {
  const id = parseKeyId(rawId);
  const [described = [], , deleted = []] = await execute([
    `SELECT k.id, a.name AS account, k.name, k.key_prefix
     FROM publishable_keys AS k JOIN accounts AS a ON a.id = k.account_id WHERE k.id = ${id}`,
    `DELETE FROM publishable_key_lists WHERE key_id = ${id}`,
    `DELETE FROM publishable_keys WHERE id = ${id} RETURNING id`,
  ]);
  const row = described[0];
  if (!row || deleted.length === 0) {
    throw new RegistryError(`There is no publishable key with id ${id}. See: npm run clients -- keys list`);
  }
  return { id, account: String(row.account), name: String(row.name), key_prefix: String(row.key_prefix) };
}
