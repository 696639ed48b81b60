/**
 * `npm run people`'s operations on the directory's people tables (`people`,
 * `members`, `auth_tickets`): create a person or give one a membership, list
 * people, take a membership away, issue a password reset link; and the
 * development person `npm start` makes (scripts/lib/local-setup.ts). The
 * rules are the service's own: addresses and names by src/people/email.ts,
 * new passwords by src/people/password-policy.ts; the stored password hash
 * and the reset ticket are written exactly as src/people/passwords.ts and
 * src/people/reset-tickets.ts write them (test/people-cli.test.ts holds the
 * two to each other, signing in through the Worker).
 *
 * Like registry.ts, every operation is one atomic run of statements through
 * an `Execute`, values written as SQL literals, and this module imports
 * nothing from Node, so the tests run it in workerd.
 */
import { emailField, emailKey, personName, MAX_PERSON_NAME_LENGTH } from "../../src/people/email.ts";
import { passwordProblem } from "../../src/people/password-policy.ts";
import { parseName, RegistryError, sqlString, UsageError, type Execute } from "./registry.ts";

/** An account's roles, strongest first (src/auth/roles.ts ROLES). */
export const ROLES = ["owner", "admin", "editor", "contributor", "viewer"] as const;
export type Role = (typeof ROLES)[number];

/** What src/people/passwords.ts hashes with: PBKDF2-HMAC-SHA-256, these iterations, a 16-byte salt, 32 bytes. */
export const PBKDF2_ITERATIONS = 100_000;
const SALT_BYTES = 16;
const HASH_BYTES = 32;
/** How long a reset link works (src/people/reset-tickets.ts RESET_TICKET_MS). */
export const RESET_TICKET_MS = 24 * 3600 * 1000;

const NOW_MS = "cast(unixepoch('subsec') * 1000 as integer)";
const utf8 = new TextEncoder();

/** Bytes as base64, without padding; `url`: the URL-safe alphabet (RFC 4648 §5). */
function base64(bytes: Uint8Array, url = false): string {
  const text = btoa(String.fromCharCode(...bytes)).replace(/=+$/, "");
  return url ? text.replaceAll("+", "-").replaceAll("/", "_") : text;
}

const iso = (ms: unknown) => (ms === null || ms === undefined ? null : new Date(Number(ms)).toISOString());

/** An email address by the API's rule, as kept (trimmed, NFC); a usage error says what is wrong. */
export function parseEmail(text: string): string {
  const parsed = emailField.safeParse(text);
  if (!parsed.success) throw new UsageError(`--email ${parsed.error.issues[0]!.message}: "${text}".`);
  return parsed.data;
}

export function parseRole(text: string): Role {
  if (!(ROLES as readonly string[]).includes(text)) {
    throw new UsageError(`--role must be one of ${ROLES.join(", ")}, not "${text}".`);
  }
  return text as Role;
}

/** A display name by the API's rule; without one, the address's local part. */
export function parsePersonName(text: string | undefined, email: string): string {
  const given = text ?? email.slice(0, email.lastIndexOf("@")).slice(0, MAX_PERSON_NAME_LENGTH);
  const parsed = personName.safeParse(given);
  if (parsed.success) return parsed.data;
  const problem = parsed.error.issues[0]!.message;
  throw new UsageError(
    text === undefined
      ? `Give a --name: the address's local part, the name by default, ${problem}.`
      : `--name ${problem}.`,
  );
}

/** A new password for the person with `email`, checked by the service's policy. */
export function checkPassword(password: string, email: string): string {
  const problem = passwordProblem(password, email);
  if (problem) throw new UsageError(`--password ${problem}.`);
  return password;
}

/** A strong password: 144 random bits, 24 characters of base64url. */
export function generatePassword(): string {
  return base64(crypto.getRandomValues(new Uint8Array(18)), true);
}

/**
 * The hash of `password` as src/people/passwords.ts stores it, in the PHC string format:
 * `$pbkdf2-sha256$i=100000$<salt>$<hash>`, over the password's NFKC form.
 */
export async function hashPassword(password: string): Promise<string> {
  const salt = crypto.getRandomValues(new Uint8Array(SALT_BYTES));
  const key = await crypto.subtle.importKey("raw", utf8.encode(password.normalize("NFKC")), "PBKDF2", false, [
    "deriveBits",
  ]);
  const bits = await crypto.subtle.deriveBits(
    { name: "PBKDF2", hash: "SHA-256", salt, iterations: PBKDF2_ITERATIONS },
    key,
    HASH_BYTES * 8,
  );
  return `$pbkdf2-sha256$i=${PBKDF2_ITERATIONS}$${base64(salt)}$${base64(new Uint8Array(bits))}`;
}

/** The person, membership and account a create or remove reads, in the same run as its writes. */
const describe = (account: string, key: string) =>
  `SELECT a.id AS account_id, p.id AS person_id, p.email, p.name, m.role,
          (SELECT count(*) FROM members WHERE account_id = a.id AND role = 'owner') AS owners,
          (SELECT count(*) FROM members WHERE person_id = p.id AND account_id <> a.id) AS other_accounts
   FROM accounts AS a LEFT JOIN people AS p ON p.email_key = ${sqlString(key)}
   LEFT JOIN members AS m ON m.account_id = a.id AND m.person_id = p.id
   WHERE a.name = ${sqlString(account)}`;

function unknownAccount(account: string): RegistryError {
  return new RegistryError(
    `There is no account named "${account}"; create it with a client first: npm run clients -- create --account NAME`,
  );
}

export type CreatedPerson = {
  person_id: number;
  email: string;
  name: string;
  account: string;
  account_id: number;
  role: Role;
  /** False: the address was someone's already; their name and password are left as they were. */
  person_created: boolean;
  /** False: they were a member of the account with this role already; nothing changed. */
  member_added: boolean;
  /** The new person's password (the one given, or the one generated); null for a person who existed. */
  password: string | null;
  password_generated: boolean;
};

/**
 * Creates the person with `email` as a member of the existing `account` with `role`, or, when the address
 * is someone's already, makes that person a member (their name and password are left as they are). The
 * person and the membership are written in one atomic run, only if the account exists; a person who is a
 * member with another role already is refused (and nothing is written). Without `password`, a strong
 * one is generated; either way it is returned once, and only its hash is stored.
 */
export async function createPerson(
  execute: Execute,
  input: { account: string; email: string; role: string; name?: string; password?: string },
): Promise<CreatedPerson> {
  const account = parseName(input.account, "account name");
  const email = parseEmail(input.email);
  const role = parseRole(input.role);
  const name = parsePersonName(input.name, email);
  const password = input.password === undefined ? generatePassword() : checkPassword(input.password, email);
  const key = emailKey(email);
  const accountName = sqlString(account);
  const [insertedPerson = [], insertedMember = [], described = []] = await execute([
    `INSERT INTO people (email, email_key, name, password_hash)
     SELECT ${sqlString(email)}, ${sqlString(key)}, ${sqlString(name)}, ${sqlString(await hashPassword(password))}
     WHERE EXISTS (SELECT 1 FROM accounts WHERE name = ${accountName})
       AND NOT EXISTS (SELECT 1 FROM people WHERE email_key = ${sqlString(key)})
     RETURNING id`,
    `INSERT INTO members (account_id, person_id, role)
     SELECT a.id, p.id, ${sqlString(role)} FROM accounts AS a, people AS p
     WHERE a.name = ${accountName} AND p.email_key = ${sqlString(key)}
     ON CONFLICT (account_id, person_id) DO NOTHING
     RETURNING role`,
    describe(account, key),
  ]);
  const row = described[0];
  if (!row) throw unknownAccount(account);
  if (row.role !== role) {
    throw new RegistryError(
      `${row.email} is a member of account "${account}" as ${row.role} already; nothing changed. ` +
        `To give them another role: npm run people -- remove, then create again.`,
    );
  }
  const created = insertedPerson.length > 0;
  return {
    person_id: Number(row.person_id),
    email: String(row.email),
    name: String(row.name),
    account,
    account_id: Number(row.account_id),
    role,
    person_created: created,
    member_added: insertedMember.length > 0,
    password: created ? password : null,
    password_generated: created && input.password === undefined,
  };
}

export type PersonSummary = {
  id: number;
  email: string;
  name: string;
  /** How they can sign in: a password, how many passkeys, whether TOTP is on. */
  password: boolean;
  passkeys: number;
  totp: boolean;
  created_at: string | null;
  memberships: { account: string; account_id: number; role: Role; since: string | null }[];
  /** Lists given to them without a membership of the list's account (docs/people-and-roles.md). */
  lists: { account: string; account_id: number; list_id: number; role: "editor" | "viewer" }[];
};

/**
 * Every person (or those in `account`: its members and its lists' collaborators), oldest first, with their
 * memberships and lists (only the account's, with `account`). Never a password hash or a secret.
 */
export async function listPeople(execute: Execute, filter: { account?: string } = {}): Promise<PersonSummary[]> {
  const account = filter.account === undefined ? undefined : parseName(filter.account, "account name");
  const inAccount = account === undefined ? "" : `AND a.name = ${sqlString(account)}`;
  const [accounts = [], people = [], memberships = [], lists = []] = await execute([
    account === undefined ? "SELECT 1" : `SELECT id FROM accounts WHERE name = ${sqlString(account)}`,
    `SELECT p.id, p.email, p.name, p.password_hash IS NOT NULL AS password, p.totp_enabled_at IS NOT NULL AS totp,
            (SELECT count(*) FROM passkeys WHERE person_id = p.id) AS passkeys, p.created_at
     FROM people AS p
     ${
       account === undefined
         ? ""
         : `WHERE p.id IN (SELECT m.person_id FROM members AS m JOIN accounts AS a ON a.id = m.account_id WHERE true ${inAccount}
                           UNION
                           SELECT l.person_id FROM list_collaborators AS l JOIN accounts AS a ON a.id = l.account_id WHERE true ${inAccount})`
     }
     ORDER BY p.id`,
    `SELECT m.person_id, a.name AS account, a.id AS account_id, m.role, m.created_at
     FROM members AS m JOIN accounts AS a ON a.id = m.account_id WHERE true ${inAccount}
     ORDER BY a.id`,
    `SELECT l.person_id, a.name AS account, a.id AS account_id, l.list_id, l.role
     FROM list_collaborators AS l JOIN accounts AS a ON a.id = l.account_id WHERE true ${inAccount}
     ORDER BY a.id, l.list_id`,
  ]);
  if (account !== undefined && accounts.length === 0)
    throw new RegistryError(`There is no account named "${account}".`);
  const byId = new Map<number, PersonSummary>();
  for (const row of people) {
    byId.set(Number(row.id), {
      id: Number(row.id),
      email: String(row.email),
      name: String(row.name),
      password: Boolean(row.password),
      passkeys: Number(row.passkeys),
      totp: Boolean(row.totp),
      created_at: iso(row.created_at),
      memberships: [],
      lists: [],
    });
  }
  for (const row of memberships) {
    byId.get(Number(row.person_id))?.memberships.push({
      account: String(row.account),
      account_id: Number(row.account_id),
      role: row.role as Role,
      since: iso(row.created_at),
    });
  }
  for (const row of lists) {
    byId.get(Number(row.person_id))?.lists.push({
      account: String(row.account),
      account_id: Number(row.account_id),
      list_id: Number(row.list_id),
      role: row.role as "editor" | "viewer",
    });
  }
  return [...byId.values()];
}

export type RemovedMember = {
  person_id: number;
  email: string;
  account: string;
  /** The role they had. */
  role: Role;
  /** The accounts they are still a member of; the person stays either way. */
  other_accounts: number;
};

/**
 * Takes the membership of the person with `email` in `account` away: their tokens for the account stop
 * working at their next request (src/auth/person-status.ts). The person stays, with their sign-in and
 * whatever else they belong to, so what they wrote still names them and they can be added again. An
 * account's last owner is not removed: an account always keeps one (the check is in the DELETE itself).
 */
export async function removeMember(
  execute: Execute,
  input: { account: string; email: string },
): Promise<RemovedMember> {
  const account = parseName(input.account, "account name");
  const key = emailKey(parseEmail(input.email));
  const [described = [], deleted = []] = await execute([
    describe(account, key),
    `DELETE FROM members
     WHERE account_id = (SELECT id FROM accounts WHERE name = ${sqlString(account)})
       AND person_id = (SELECT id FROM people WHERE email_key = ${sqlString(key)})
       AND (role <> 'owner' OR (SELECT count(*) FROM members AS o
                                WHERE o.account_id = members.account_id AND o.role = 'owner') > 1)
     RETURNING role`,
  ]);
  const row = described[0];
  if (!row) throw unknownAccount(account);
  if (row.person_id === null)
    throw new RegistryError(`There is no person with the email address ${input.email.trim()}.`);
  if (row.role === null) throw new RegistryError(`${row.email} is not a member of account "${account}".`);
  if (deleted.length === 0) {
    throw new RegistryError(
      `${row.email} is the only owner of account "${account}", which must keep one: make someone else owner first.`,
    );
  }
  return {
    person_id: Number(row.person_id),
    email: String(row.email),
    account,
    role: row.role as Role,
    other_accounts: Number(row.other_accounts),
  };
}

export type IssuedReset = {
  person_id: number;
  email: string;
  /** The link's secret: the path segment of POST /v3.0/auth/password-reset/{token}. */
  token: string;
  expires_at: string;
};

/**
 * A password reset link's secret for the person with `email`, as src/people/reset-tickets.ts issues one:
 * a single-use `reset` ticket kept as the SHA-256 of the secret, good for 24 hours; any earlier link of
 * theirs stops working. Returned once.
 */
export async function issueReset(execute: Execute, input: { email: string }): Promise<IssuedReset> {
  const key = sqlString(emailKey(parseEmail(input.email)));
  const token = base64(crypto.getRandomValues(new Uint8Array(32)), true);
  const id = base64(new Uint8Array(await crypto.subtle.digest("SHA-256", utf8.encode(token))), true);
  const [, inserted = [], person = []] = await execute([
    `DELETE FROM auth_tickets WHERE kind = 'reset' AND person_id = (SELECT id FROM people WHERE email_key = ${key})`,
    `INSERT INTO auth_tickets (id, kind, person_id, expires_at, created_at)
     SELECT ${sqlString(id)}, 'reset', id, ${NOW_MS} + ${RESET_TICKET_MS}, ${NOW_MS} FROM people WHERE email_key = ${key}
     RETURNING expires_at`,
    `SELECT id, email FROM people WHERE email_key = ${key}`,
  ]);
  const [ticket, row] = [inserted[0], person[0]];
  if (!ticket || !row) throw new RegistryError(`There is no person with the email address ${input.email.trim()}.`);
  return { person_id: Number(row.id), email: String(row.email), token, expires_at: iso(ticket.expires_at)! };
}

/**
 * Makes sure the person with `email` exists, signs in with the password whose hash is `passwordHash`, and
 * is a member of the existing `account` with `role`: `npm start`'s development person. Returns what it had
 * to do: nothing, when all of it was so.
 */
export async function ensurePerson(
  execute: Execute,
  input: { account: string; email: string; name: string; role: Role; passwordHash: string },
): Promise<{ person: "created" | "password set" | "kept"; member: "added" | "role set" | "kept" }> {
  const key = sqlString(emailKey(input.email));
  const accountId = `(SELECT id FROM accounts WHERE name = ${sqlString(input.account)})`;
  const [before = []] = await execute([
    `SELECT p.password_hash, m.role FROM people AS p
     LEFT JOIN members AS m ON m.person_id = p.id AND m.account_id = ${accountId}
     WHERE p.email_key = ${key}`,
    `INSERT INTO people (email, email_key, name, password_hash)
     VALUES (${sqlString(input.email)}, ${key}, ${sqlString(input.name)}, ${sqlString(input.passwordHash)})
     ON CONFLICT (email_key) DO UPDATE SET password_hash = excluded.password_hash, updated_at = ${NOW_MS}
     WHERE password_hash IS NOT excluded.password_hash`,
    `INSERT INTO members (account_id, person_id, role)
     SELECT ${accountId}, id, ${sqlString(input.role)} FROM people WHERE email_key = ${key}
     ON CONFLICT (account_id, person_id) DO UPDATE SET role = excluded.role, version = version + 1, updated_at = ${NOW_MS}
     WHERE role <> excluded.role`,
  ]);
  const row = before[0];
  return {
    person: !row ? "created" : row.password_hash === input.passwordHash ? "kept" : "password set",
    member: !row || row.role === null ? "added" : row.role === input.role ? "kept" : "role set",
  };
}
