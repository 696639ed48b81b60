/**
 * The registration tool (the provider's portal): `npm run clients -- <command>`.
 * Creates, lists, rotates and revokes API clients, and creates, lists and
 * revokes publishable keys, in the local D1 database (default), a local
 * database kept elsewhere (--persist-to DIR) or the deployed one (--remote).
 * See docs/registering-clients.md.
 *
 * Exit codes: 0 done, 1 could not be done (unknown or revoked client, unknown
 * account or key, wrangler failed), 2 the command line is wrong.
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
  type Execute,
} from "./lib/registry.ts";
import { createKey, listKeys, revokeKey, type KeySummary } from "./lib/keys.ts";
import { configuredShards, copyAccountToShards, emptiestShard } from "./lib/shards.ts";
import { d1Execute, WranglerError, type Target } from "./lib/wrangler.ts";

const USAGE = `Usage: npm run clients -- <command> [options]

Commands:
  create --account NAME [--name CLIENT_NAME] [--scope "read write"] [--shard SHARD]
        Create a client for the account NAME (the account is created if it does
        not exist). Prints the client id and secret; the secret is shown only
        this once. --name defaults to "default", --scope to "read write"
        (allowed scopes: read, write). A new account's content goes to the
        shard SHARD (one of wrangler.toml's SHARDS), by default the one
        holding the fewest places (docs/scaling.md).
  list [--account NAME]
        List accounts and their clients (scope, status, dates; never secrets).
  rotate CLIENT_ID
        Give the client a new secret (printed once). Tokens issued with the old
        secret stop working within 60 seconds.
  revoke CLIENT_ID
        Revoke the client: no new tokens, and its tokens stop working within
        60 seconds.

  keys create --account NAME [--name KEY_NAME] [--list ID]... [--origin ORIGIN]...
              [--expires ISO8601]
        Create a publishable key (read-only, for web pages) for the existing
        account NAME. Prints the key; it is shown only this once. --list names
        a list of the account the key reads (repeat it for more); without
        --list the key reads every list of the account, now and later.
        --origin names a web origin that may use it, such as
        https://maps.example.com or https://*.example.org (repeat it for
        more; without it, any). --expires is when it stops working, such as
        2030-01-31T18:00:00Z (without it, never). --name defaults to "default".
  keys list [--account NAME]
        List publishable keys (account, name, prefix, lists, origins, expiry;
        never the key).
  keys revoke KEY_ID
        Delete the key: it stops working within seconds.

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
  shard: { type: "string" },
  name: { type: "string" },
  scope: { type: "string" },
  list: { type: "string", multiple: true },
  origin: { type: "string", multiple: true },
  expires: { type: "string" },
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
  for (const key of ["account", "name", "scope", "list", "origin", "expires"] as const) {
    if (values[key] !== undefined && !allowed.includes(key)) {
      throw new UsageError(`The ${command} command does not take --${key}.`);
    }
  }
}

function expectArgs(command: string, args: string[], count: number, needs = "CLIENT_ID") {
  if (args.length < count) throw new UsageError(`The ${command} command needs a ${needs}.`);
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
  printTable(rows);
}

/** Rows as columns padded to their widest cell. */
function printTable(rows: string[][]) {
  const widths = rows[0]!.map((_, i) => Math.max(...rows.map((r) => r[i]!.length)));
  for (const row of rows)
    print(
      row
        .map((cell, i) => cell.padEnd(widths[i]!))
        .join("  ")
        .trimEnd(),
    );
}

/** Keys as a table; "all" lists and "any" origin when the key is not limited. */
function printKeys(keys: KeySummary[], now = Date.now()) {
  if (keys.length === 0) {
    print("No publishable keys yet. Create one with: npm run clients -- keys create --account NAME");
    return;
  }
  const rows = [["KEY ID", "ACCOUNT", "NAME", "PREFIX", "LISTS", "ORIGINS", "EXPIRES", "CREATED"]];
  for (const key of keys) {
    const expires =
      key.expires_at === null ? "never" : `${key.expires_at}${Date.parse(key.expires_at) <= now ? " (expired)" : ""}`;
    rows.push([
      String(key.id),
      key.account,
      key.name,
      `${key.key_prefix}…`,
      key.lists?.join(",") ?? "all",
      key.origins?.join(" ") ?? "any",
      expires,
      key.created_at,
    ]);
  }
  printTable(rows);
}

async function keys(execute: Execute, values: Values, args: string[], json: boolean): Promise<void> {
  const [subcommand, ...rest] = args;
  const command = `keys ${subcommand}`;
  switch (subcommand) {
    case "create": {
      only(values, command, ["account", "name", "list", "origin", "expires"]);
      expectArgs(command, rest, 0);
      if (values.account === undefined) throw new UsageError("The keys create command needs --account NAME.");
      const created = await createKey(execute, {
        account: values.account,
        name: values.name ?? "default",
        lists: values.list,
        origins: values.origin,
        expires: values.expires,
      });
      if (json) {
        // The fields of the API's 201 answer to POST /v3.0/keys.
        const { id, key, name, key_prefix, lists, origins, expires_at, created_at } = created;
        print(JSON.stringify({ id, key, name, key_prefix, lists, origins, expires_at, created_at }));
        return;
      }
      print(`Created publishable key "${created.name}" for account "${created.account}".`);
      print(`  id:      ${created.id}`);
      print(`  key:     ${created.key}`);
      print(`  lists:   ${created.lists?.join(", ") ?? "every list of the account, now and later"}`);
      print(`  origins: ${created.origins?.join(", ") ?? "any"}`);
      print(`  expires: ${created.expires_at ?? "never"}`);
      note("The key is shown only now; only its hash is stored. Keep it somewhere safe.");
      return;
    }
    case "list": {
      only(values, command, ["account"]);
      expectArgs(command, rest, 0);
      const listed = await listKeys(execute, { account: values.account });
      if (json) print(JSON.stringify({ keys: listed }));
      else printKeys(listed);
      return;
    }
    case "revoke": {
      only(values, command, []);
      expectArgs(command, rest, 1, "KEY_ID");
      const revoked = await revokeKey(execute, rest[0]!);
      if (json) {
        print(JSON.stringify(revoked));
        return;
      }
      print(
        `Revoked publishable key ${revoked.id} "${revoked.name}" (${revoked.key_prefix}…, account "${revoked.account}"). It stops working within seconds.`,
      );
      return;
    }
    case undefined:
      throw new UsageError("Name a keys command: keys create, keys list or keys revoke.");
    default:
      throw new UsageError(`Unknown command "keys ${subcommand}"; use keys create, keys list or keys revoke.`);
  }
}

async function main(argv: string[]): Promise<void> {
  const { values, positionals } = parseArgs({ args: argv, options, allowPositionals: true, strict: true });
  const [command, ...args] = positionals;
  if (values.help || command === "help") {
    print(USAGE);
    return;
  }
  if (command === undefined) throw new UsageError("Name a command: create, list, rotate, revoke or keys.");
  const execute = d1Execute(target(values));
  const json = values.json === true;

  switch (command) {
    case "create": {
      only(values, command, ["account", "name", "scope", "shard"]);
      expectArgs(command, args, 0);
      if (values.account === undefined) throw new UsageError("The create command needs --account NAME.");
      // Checked before anything is written, so a typo never creates an account.
      const scope = parseScope(values.scope ?? "read write");
      const shards = configuredShards();
      if (values.shard !== undefined && !shards.includes(values.shard)) {
        throw new UsageError(`--shard must name one of the shards of wrangler.toml's SHARDS: ${shards.join(", ")}.`);
      }
      const shard = values.shard ?? (shards.length === 1 ? shards[0] : await emptiestShard(target(values)));
      const created = await createClient(execute, {
        account: values.account,
        name: values.name ?? "default",
        scope,
        shard,
      });
      await copyAccountToShards(execute, target(values), created.account_id);
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
    case "keys":
      await keys(execute, values, args, json);
      return;
    default:
      throw new UsageError(`Unknown command "${command}"; use create, list, rotate, revoke or keys.`);
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
