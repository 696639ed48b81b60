/**
 * What `npm start` and `npm run preview` do before they serve the local
 * service (scripts/dev.ts, scripts/preview.ts), so both serve the same data:
 * a wrangler.toml whose D1 bindings are distinct databases, a signing key and
 * an operator secret in .dev.vars, pending migrations applied to every local
 * database, their data fills run, a development client (kept in
 * .dev-client.json) and a development person, owner of the same account
 * (kept in .dev-person.json; the three files are gitignored), the sample
 * guide offered to an empty development account; then the base URL, the
 * client's and the person's credentials and curl lines to try it.
 */
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { parseEnv } from "node:util";
import { batchOn } from "../../src/db/fills.ts";
import { DEV_VARS, ensureDevSecret } from "./dev-vars.ts";
import { fillDatabases, fillSummary } from "./fills.ts";
import { ensurePerson, generatePassword, hashPassword } from "./people.ts";
import { clientAccepts, createClient, type Execute } from "./registry.ts";
import { checkDistinctDatabases, migrateAll } from "./shards.ts";
import { d1Execute, ROOT, type Target } from "./wrangler.ts";
import { offerSeed, withLocalBindings } from "../seed/local.ts";

const DEV_CLIENT = join(ROOT, ".dev-client.json");
const DEV_ACCOUNT = "development";
const DEV_CLIENT_NAME = "local development";
const DEV_PERSON = join(ROOT, ".dev-person.json");
/** An address of the domain RFC 2606 keeps for examples: it reaches no one. */
const DEV_EMAIL = "developer@example.com";
const DEV_PERSON_NAME = "Developer";
/** The Worker refuses shorter secrets (src/core/signing.ts MIN_SECRET_LENGTH). */
const MIN_KEY_LENGTH = 32;

export type DevClient = { client_id: string; client_secret: string; account: string; scope: string };

/** The development person as saved: the password, and its hash to tell whether the database still has it. */
export type DevPerson = { email: string; password: string; password_hash: string; account: string; role: "owner" };

const say = (line = "") => process.stdout.write(`${line}\n`);

/**
 * Secrets for local runs only (deployed Workers get theirs from `wrangler secret put`): the signing key,
 * and the operator secret that `npm run accounts -- move` sends (scripts/lib/operator.ts).
 */
function ensureDevVars(): void {
  for (const name of ["TOKEN_SIGNING_KEY", "OPERATOR_SECRET"]) {
    const done = ensureDevSecret(name, MIN_KEY_LENGTH);
    if (done) say(done);
  }
}

/** The variables of .dev.vars, as `wrangler dev` reads them over wrangler.toml's [vars]. */
export function devVars(): Record<string, string> {
  return existsSync(DEV_VARS) ? (parseEnv(readFileSync(DEV_VARS, "utf8")) as Record<string, string>) : {};
}

function applyMigrations(target: Target): void {
  // wrangler prints a table of every migration, twice, which pushed the credentials off the first
  // screen; one line says the same, and the whole output is shown only when it failed. Every
  // database of the configuration: the directory and each shard (docs/scaling.md).
  const applied = [...migrateAll(target)];
  if (applied.every(([, count]) => count === 0)) say("The local database is up to date.");
  else if (applied.length === 1) say(`Applied ${applied[0]![1]} migration(s) to the local database.`);
  else say(`Applied migrations to the local databases: ${applied.map(([db, n]) => `${db} ${n}`).join(", ")}.`);
}

/** The data fills the migrations left, run to the end: a local database is small. */
async function fillLocal(target: Target): Promise<void> {
  const runs = await withLocalBindings(target, (env) =>
    fillDatabases((binding) => batchOn((env as unknown as Record<string, Parameters<typeof batchOn>[0]>)[binding]!)),
  );
  const summary = fillSummary(runs);
  if (summary) say(summary);
}

function readDevClient(): DevClient | null {
  try {
    const saved = JSON.parse(readFileSync(DEV_CLIENT, "utf8")) as Partial<DevClient>;
    return typeof saved.client_id === "string" && typeof saved.client_secret === "string" ? (saved as DevClient) : null;
  } catch {
    return null;
  }
}

/**
 * The saved development client if this database still accepts it; otherwise a
 * new one, created exactly as `npm run clients -- create` does.
 */
async function ensureDevClient(execute: Execute): Promise<DevClient> {
  const saved = readDevClient();
  if (saved && (await clientAccepts(execute, saved.client_id, saved.client_secret))) return saved;
  const created = await createClient(execute, { account: DEV_ACCOUNT, name: DEV_CLIENT_NAME, scope: "read write" });
  const client: DevClient = {
    client_id: created.client_id,
    client_secret: created.client_secret,
    account: created.account,
    scope: created.scope,
  };
  writeFileSync(DEV_CLIENT, `${JSON.stringify(client, null, 2)}\n`, { mode: 0o600 });
  say(`Created the development client ${client.client_id} (saved in .dev-client.json).`);
  return client;
}

function readDevPerson(): DevPerson | null {
  try {
    const saved = JSON.parse(readFileSync(DEV_PERSON, "utf8")) as Partial<DevPerson>;
    return saved.email === DEV_EMAIL && typeof saved.password === "string" && typeof saved.password_hash === "string"
      ? (saved as DevPerson)
      : null;
  } catch {
    return null;
  }
}

/**
 * The development person: an owner of the development client's account who signs in with the password
 * saved in .dev-person.json. Across restarts the same person and password; on a database that lacks
 * either (a new state directory, a password changed in the browser) they are put (back) in place.
 */
async function ensureDevPerson(execute: Execute, account: string): Promise<DevPerson> {
  const saved = readDevPerson();
  const password = saved?.password ?? generatePassword();
  const person: DevPerson = {
    email: DEV_EMAIL,
    password,
    password_hash: saved?.password_hash ?? (await hashPassword(password)),
    account,
    role: "owner",
  };
  const done = await ensurePerson(execute, {
    account,
    email: DEV_EMAIL,
    name: DEV_PERSON_NAME,
    role: "owner",
    passwordHash: person.password_hash,
  });
  if (!saved) writeFileSync(DEV_PERSON, `${JSON.stringify(person, null, 2)}\n`, { mode: 0o600 });
  if (done.person === "created") {
    say(`Created the development person ${DEV_EMAIL}, owner of "${account}" (saved in .dev-person.json).`);
  } else if (done.person !== "kept" || done.member !== "kept") {
    say(`Put the development person back: ${DEV_EMAIL}, owner of "${account}", password from .dev-person.json.`);
  }
  return person;
}

/** Everything before serving, in order; the development client and person. */
export async function prepareLocal(
  target: Target,
  seed: "ask" | "yes",
): Promise<{ client: DevClient; person: DevPerson }> {
  checkDistinctDatabases(target);
  ensureDevVars();
  applyMigrations(target);
  await fillLocal(target);
  const execute = d1Execute(target);
  const client = await ensureDevClient(execute);
  const person = await ensureDevPerson(execute, client.account);
  await offerSeed(target, client.account, seed);
  return { client, person };
}

/** The base URL, the client's and the person's credentials and the curl lines to try them, under `title`. */
export function printWelcome(
  title: string,
  baseUrl: string,
  { client, person }: { client: DevClient; person: DevPerson },
): void {
  const token = `curl -s -u ${client.client_id}:${client.client_secret} -d grant_type=client_credentials ${baseUrl}/v3.0/oauth2/token`;
  say();
  say(title);
  say(`  Base URL:      ${baseUrl}`);
  say(`  API reference: ${baseUrl}/docs (Authorize there with the client id and secret)`);
  say(`  Client id:     ${client.client_id}`);
  say(`  Client secret: ${client.client_secret}`);
  say(`  (account "${client.account}", scope "${client.scope}"; kept in .dev-client.json)`);
  say(`  Person:        ${person.email}`);
  say(`  Password:      ${person.password}`);
  say(`  (${person.role} of "${person.account}"; kept in .dev-person.json; signs in at POST /v3.0/auth/sign-in,`);
  say(`  or on ${baseUrl}/auth/passkey.html, where they add their passkeys)`);
  say();
  say("Get a token:");
  say(`  ${token}`);
  say("Use it:");
  say(`  TOKEN=$(${token} | sed -E 's/.*"access_token":"([^"]+)".*/\\1/')`);
  say(`  curl -H "Authorization: Bearer $TOKEN" ${baseUrl}/v3.0/pinpoints`);
  say();
}

/** The port option of both commands: 8787 unless given. */
export function portOption(value: string | undefined): number {
  const port = Number(value ?? 8787);
  if (!Number.isInteger(port) || port < 1 || port > 65535)
    throw new Error(`--port must be a port number, not ${value}.`);
  return port;
}
