/**
 * The registration tool (the provider's portal): `npm run clients -- <command>`.
 * Creates, lists, rotates and revokes API clients in the local D1 database
 * (default), a local database kept elsewhere (--persist-to DIR) or the
 * deployed one (--remote). See README.md, "Registering clients".
 *
 * Exit codes: 0 done, 1 could not be done (unknown or revoked client, wrangler
 * failed), 2 the command line is wrong.
 */
import { parseArgs } from "node:util";
import {
  createClient,
  listClients,
  parseScope,
  RegistryError,
  revokeClient,
  rotateSecret,
  UsageError,
  type AccountSummary,
} from "./lib/registry.ts";
import { d1Execute, WranglerError, type Target } from "./lib/wrangler.ts";

const USAGE = `Usage: npm run clients -- <command> [options]

Commands:
  create --account NAME [--name CLIENT_NAME] [--scope "read write"]
        Create a client for the account NAME (the account is created if it does
        not exist). Prints the client id and secret; the secret is shown only
        this once. --name defaults to "default", --scope to "read write"
        (allowed scopes: read, write).
  list [--account NAME]
        List accounts and their clients (scope, status, dates; never secrets).
  rotate CLIENT_ID
        Give the client a new secret (printed once). Tokens issued with the old
        secret stop working within 60 seconds.
  revoke CLIENT_ID
        Revoke the client: no new tokens, and its tokens stop working within
        60 seconds.

Options:
  --remote            Use the deployed D1 database (wrangler must be logged in).
  --local             Use the local database (the default), as \`npm start\` does.
  --persist-to DIR    Local state directory, as given to \`wrangler dev --persist-to\`.
  --json              Print exactly one JSON object on stdout instead of text
                      (on failure: {"error": MESSAGE, "exit_code": N}).
  -h, --help          Show this help.

Exit codes: 0 done, 1 could not be done, 2 wrong usage.`;

const options = {
  account: { type: "string" },
  name: { type: "string" },
  scope: { type: "string" },
  remote: { type: "boolean" },
  local: { type: "boolean" },
  "persist-to": { type: "string" },
  json: { type: "boolean" },
  help: { type: "boolean", short: "h" },
} as const;

type Values = ReturnType<typeof parseArgs<{ options: typeof options; allowPositionals: true }>>["values"];

function target(values: Values): Target {
  if (values.remote && (values.local || values["persist-to"] !== undefined)) {
    throw new UsageError("--remote cannot be combined with --local or --persist-to.");
  }
  return { remote: values.remote === true, persistTo: values["persist-to"] };
}

/** Options that only some commands take must not be given to the others (they would be silently ignored). */
function only(values: Values, command: string, allowed: readonly (keyof Values)[]) {
  for (const key of ["account", "name", "scope"] as const) {
    if (values[key] !== undefined && !allowed.includes(key)) {
      throw new UsageError(`The ${command} command does not take --${key}.`);
    }
  }
}

function expectArgs(command: string, args: string[], count: number) {
  if (args.length < count) throw new UsageError(`The ${command} command needs a CLIENT_ID.`);
  if (args.length > count) throw new UsageError(`Unexpected argument "${args[count]}".`);
}

const print = (line = "") => process.stdout.write(`${line}\n`);
const note = (line: string) => process.stderr.write(`${line}\n`);

function printList(accounts: AccountSummary[]) {
  if (accounts.length === 0) {
    print("No accounts yet. Create one with: npm run clients -- create --account NAME");
    return;
  }
  const rows = [["ACCOUNT", "CLIENT ID", "NAME", "SCOPE", "STATUS", "CREATED"]];
  for (const account of accounts) {
    if (account.clients.length === 0) rows.push([account.name, "(no clients)", "", "", "", account.created_at ?? ""]);
    for (const client of account.clients) {
      const status = client.revoked ? `revoked ${client.revoked_at}` : `active (secret v${client.secret_version})`;
      rows.push([account.name, client.client_id, client.name, client.scope, status, client.created_at ?? ""]);
    }
  }
  const widths = rows[0]!.map((_, i) => Math.max(...rows.map((r) => r[i]!.length)));
  for (const row of rows)
    print(
      row
        .map((cell, i) => cell.padEnd(widths[i]!))
        .join("  ")
        .trimEnd(),
    );
}

async function main(argv: string[]): Promise<void> {
  const { values, positionals } = parseArgs({ args: argv, options, allowPositionals: true, strict: true });
  const [command, ...args] = positionals;
  if (values.help || command === "help") {
    print(USAGE);
    return;
  }
  if (command === undefined) throw new UsageError("Name a command: create, list, rotate or revoke.");
  const execute = d1Execute(target(values));
  const json = values.json === true;

  switch (command) {
    case "create": {
      only(values, command, ["account", "name", "scope"]);
      expectArgs(command, args, 0);
      if (values.account === undefined) throw new UsageError("The create command needs --account NAME.");
      // Checked before anything is written, so a typo never creates an account.
      const scope = parseScope(values.scope ?? "read write");
      const created = await createClient(execute, { account: values.account, name: values.name ?? "default", scope });
      if (json) {
        const { client_id, client_secret, account, scope, name, account_created, created_at } = created;
        print(JSON.stringify({ client_id, client_secret, account, scope, name, account_created, created_at }));
        return;
      }
      print(
        `Created client "${created.name}" for ${created.account_created ? "new" : "existing"} account "${created.account}".`,
      );
      print(`  client_id:     ${created.client_id}`);
      print(`  client_secret: ${created.client_secret}`);
      print(`  scope:         ${created.scope}`);
      note("The secret is shown only now; only its hash is stored. Keep it somewhere safe.");
      return;
    }
    case "list": {
      only(values, command, ["account"]);
      expectArgs(command, args, 0);
      const accounts = await listClients(execute, { account: values.account });
      if (json) print(JSON.stringify({ accounts }));
      else printList(accounts);
      return;
    }
    case "rotate": {
      only(values, command, []);
      expectArgs(command, args, 1);
      const rotated = await rotateSecret(execute, args[0]!);
      if (json) {
        print(JSON.stringify(rotated));
        return;
      }
      print(`New secret for client ${rotated.client_id} (account "${rotated.account}", scope "${rotated.scope}"):`);
      print(`  client_secret: ${rotated.client_secret}`);
      note("The secret is shown only now. Tokens issued with the old secret stop working within 60 seconds.");
      return;
    }
    case "revoke": {
      only(values, command, []);
      expectArgs(command, args, 1);
      const revoked = await revokeClient(execute, args[0]!);
      if (json) {
        print(JSON.stringify(revoked));
        return;
      }
      print(
        revoked.changed
          ? `Revoked client ${revoked.client_id} (account "${revoked.account}"). Its tokens stop working within 60 seconds.`
          : `Client ${revoked.client_id} (account "${revoked.account}") was already revoked on ${revoked.revoked_at}.`,
      );
      return;
    }
    default:
      throw new UsageError(`Unknown command "${command}"; use create, list, rotate or revoke.`);
  }
}

const argv = process.argv.slice(2);
try {
  await main(argv);
} catch (error) {
  // parseArgs reports unknown or malformed options with these codes.
  const code = (error as { code?: string }).code;
  const usage = error instanceof UsageError || code?.startsWith("ERR_PARSE_ARGS") === true;
  if (!usage && !(error instanceof RegistryError || error instanceof WranglerError)) throw error;
  const message = (error as Error).message;
  note(`error: ${message}`);
  if (usage) note("Run `npm run clients -- --help` for usage.");
  process.exitCode = usage ? 2 : 1;
  // Scripts asked for JSON: they get one object on stdout for failures too.
  if (argv.includes("--json")) print(JSON.stringify({ error: message, exit_code: process.exitCode }));
}
