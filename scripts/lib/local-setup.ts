/**
 * What `npm start` and `npm run preview` do before they serve the local
 * service (scripts/dev.ts, scripts/preview.ts), so both serve the same data:
 * a wrangler.toml whose D1 bindings are distinct databases, a signing key and
 * an operator secret in .dev.vars, pending migrations applied to every local
 * database, their data fills run, a development client (kept in
 * .dev-client.json; both files are gitignored), the sample guide offered to
 * an empty development account; then the base URL, the client's credentials
 * and curl lines to try it.
 */
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { parseEnv } from "node:util";
import { batchOn } from "../../src/db/fills.ts";
import { DEV_VARS, ensureDevSecret } from "./dev-vars.ts";
import { fillDatabases, fillSummary } from "./fills.ts";
import { clientAccepts, createClient, type Execute } from "./registry.ts";
import { checkDistinctDatabases, migrateAll } from "./shards.ts";
import { d1Execute, ROOT, type Target } from "./wrangler.ts";
import { offerSeed, withLocalBindings } from "../seed/local.ts";

const DEV_CLIENT = join(ROOT, ".dev-client.json");
const DEV_ACCOUNT = "development";
const DEV_CLIENT_NAME = "local development";
/** The Worker refuses shorter secrets (src/core/signing.ts MIN_SECRET_LENGTH). */
const MIN_KEY_LENGTH = 32;

export type DevClient = { client_id: string; client_secret: string; account: string; scope: string };

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

/** Everything before serving, in order; the development client. */
export async function prepareLocal(target: Target, seed: "ask" | "yes"): Promise<DevClient> {
  checkDistinctDatabases(target);
  ensureDevVars();
  applyMigrations(target);
  await fillLocal(target);
  const client = await ensureDevClient(d1Execute(target));
  await offerSeed(target, client.account, seed);
  return client;
}

/** The base URL, the client's credentials and the curl lines to try it, under `title`. */
export function printWelcome(title: string, baseUrl: string, client: DevClient): void {
  const token = `curl -s -u ${client.client_id}:${client.client_secret} -d grant_type=client_credentials ${baseUrl}/v3.0/oauth2/token`;
  say();
  say(title);
  say(`  Base URL:      ${baseUrl}`);
  say(`  API reference: ${baseUrl}/docs (Authorize there with the client id and secret)`);
  say(`  Client id:     ${client.client_id}`);
  say(`  Client secret: ${client.client_secret}`);
  say(`  (account "${client.account}", scope "${client.scope}"; kept in .dev-client.json)`);
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
