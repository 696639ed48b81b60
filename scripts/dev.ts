/**
 * `npm start`: runs the service locally on embedded D1 and R2 (`wrangler dev
 * --local`). Before starting it refuses a wrangler.toml in which two D1
 * bindings are one database, makes sure .dev.vars holds a signing key and an
 * operator secret, applies pending migrations, and makes sure a development
 * client exists (kept in .dev-client.json; both files are gitignored), then
 * prints the base URL, the client's credentials and curl lines to try it.
 *
 * When the development account has no content it offers the sample city
 * guide of `npm run seed` (asks on a terminal; `--seed` fills it at once).
 *
 *   npm start [-- --port N] [--persist-to DIR] [--seed] [-- <more wrangler dev flags>]
 */
import { readFileSync, writeFileSync } from "node:fs";
import { constants } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { ensureDevSecret } from "./lib/dev-vars.ts";
import { clientAccepts, createClient, type Execute } from "./lib/registry.ts";
import { checkDistinctDatabases, migrateAll } from "./lib/shards.ts";
import { d1Execute, devFlags, ROOT, spawnWrangler, type Target } from "./lib/wrangler.ts";
import { offerSeed } from "./seed/local.ts";

const DEV_CLIENT = join(ROOT, ".dev-client.json");
const DEV_ACCOUNT = "development";
const DEV_CLIENT_NAME = "local development";
/** The Worker refuses shorter secrets (src/core/signing.ts MIN_SECRET_LENGTH). */
const MIN_KEY_LENGTH = 32;

const USAGE = `Usage: npm start [-- options] [-- <wrangler dev flags>]

Runs the service locally with \`wrangler dev --local\` on embedded D1 and R2,
after applying pending migrations and making sure a development client exists.

Options:
  --port N           Port to listen on (default 8787).
  --persist-to DIR   Local state directory (default .wrangler/state).
  --seed             Fill an empty development account with the sample city guide
                     (npm run seed) without asking.
  -h, --help         Show this help.`;

type DevClient = { client_id: string; client_secret: string; account: string; scope: string };

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

function applyMigrations(target: Target): void {
  // wrangler prints a table of every migration, twice, which pushed the credentials off the first
  // screen; one line says the same, and the whole output is shown only when it failed. Every
  // database of the configuration: the directory and each shard (docs/scaling.md).
  const applied = [...migrateAll(target)];
  if (applied.every(([, count]) => count === 0)) say("The local database is up to date.");
  else if (applied.length === 1) say(`Applied ${applied[0]![1]} migration(s) to the local database.`);
  else say(`Applied migrations to the local databases: ${applied.map(([db, n]) => `${db} ${n}`).join(", ")}.`);
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

function printWelcome(baseUrl: string, client: DevClient): void {
  const token = `curl -s -u ${client.client_id}:${client.client_secret} -d grant_type=client_credentials ${baseUrl}/v3.0/oauth2/token`;
  say();
  say("POI content API, local development");
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

/** Runs `wrangler dev` in the foreground; signals sent to this process are passed on. */
function runDev(target: Target, port: number, extra: string[]): Promise<number> {
  const child = spawnWrangler(["dev", ...devFlags(target), "--port", String(port), ...extra]);
  const forward = (signal: NodeJS.Signals) => child.kill(signal);
  for (const signal of ["SIGINT", "SIGTERM", "SIGHUP"] as const) process.on(signal, forward);
  return new Promise((resolve, reject) => {
    child.on("error", reject);
    child.on("exit", (code, signal) => resolve(code ?? 128 + (signal ? constants.signals[signal] : 1)));
  });
}

async function main(): Promise<number> {
  const { values, positionals } = parseArgs({
    options: {
      port: { type: "string" },
      "persist-to": { type: "string" },
      seed: { type: "boolean" },
      help: { type: "boolean", short: "h" },
    },
    allowPositionals: true,
  });
  if (values.help) {
    say(USAGE);
    return 0;
  }
  const port = Number(values.port ?? 8787);
  if (!Number.isInteger(port) || port < 1 || port > 65535)
    throw new Error(`--port must be a port number, not ${values.port}.`);
  const target: Target = { remote: false, persistTo: values["persist-to"] };

  checkDistinctDatabases(target);
  ensureDevVars();
  applyMigrations(target);
  const client = await ensureDevClient(d1Execute(target));
  await offerSeed(target, client.account, values.seed ? "yes" : "ask");
  printWelcome(`http://localhost:${port}`, client);
  return runDev(target, port, positionals);
}

try {
  process.exitCode = await main();
} catch (error) {
  process.stderr.write(`npm start: ${error instanceof Error ? error.message : String(error)}\n`);
  process.exitCode = 1;
}
