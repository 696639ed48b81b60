/**
 * People without a browser: `npm run people -- <command>`. Creates people as
 * members of an account, lists them, takes a membership away and issues
 * password reset links, in the local D1 database (default), a local database
 * kept elsewhere (--persist-to DIR) or the deployed one (--remote), as
 * `npm run clients` does for clients. See docs/people-and-roles.md, "People
 * from the command line".
 *
 * Exit codes: 0 done, 1 could not be done (unknown account or person, a role
 * held already, the last owner, wrangler failed), 2 the command line is wrong.
 */
import { parseArgs } from "node:util";
import { LOCAL_BASE } from "./lib/operator.ts";
import {
  createPerson,
  issueReset,
  listPeople,
  removeMember,
  ROLES,
  type CreatedPerson,
  type PersonSummary,
} from "./lib/people.ts";
import { RegistryError, UsageError } from "./lib/registry.ts";
import { d1Execute, WranglerError, type Target } from "./lib/wrangler.ts";

const USAGE = `Usage: npm run people -- <command> [options]

Commands:
  create --account NAME --email EMAIL --role ROLE [--name NAME] [--password PASSWORD]
        Make the person with EMAIL a member of the existing account NAME
        with ROLE, one of: ${ROLES.join(", ")}.
        A new person gets the name NAME (by default the address's part
        before the @) and the password PASSWORD, or a generated one; it is
        printed only this once. A password has 12 to 128 characters and is
        not one of the most common ones. When the address is someone's
        already, they are made a member, and their name and password stay
        as they are; when they are a member with ROLE already, nothing
        changes.
  list [--account NAME]
        People (of the account NAME: its members and its lists'
        collaborators), their accounts and roles, and how they sign in
        (never a secret).
  remove --account NAME --email EMAIL
        Take the person's membership of the account away: their tokens for it
        stop working at their next request. The person stays (what they wrote
        keeps their name; create adds them again). An account's only owner
        cannot be removed.
  reset --email EMAIL [--base URL]
        Print a password reset link for the person: good once, for 24 hours;
        any earlier link of theirs stops working. URL is where the service
        runs (default ${LOCAL_BASE}; with --remote, POI_BASE_URL).

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
  email: { type: "string" },
  role: { type: "string" },
  name: { type: "string" },
  password: { type: "string" },
  base: { type: "string" },
  remote: { type: "boolean" },
  local: { type: "boolean" },
  "persist-to": { type: "string" },
  json: { type: "boolean" },
  help: { type: "boolean", short: "h" },
} as const;

type Values = ReturnType<typeof parseArgs<{ options: typeof options; allowPositionals: true }>>["values"];

const COMMAND_OPTIONS = ["account", "email", "role", "name", "password", "base"] as const;

function target(values: Values): Target {
  if (values.remote && (values.local || values["persist-to"] !== undefined)) {
    throw new UsageError("--remote cannot be combined with --local or --persist-to.");
  }
  return { remote: values.remote === true, persistTo: values["persist-to"] };
}

/** Checks the command's options: those it needs are there, no other is (it would be silently ignored). */
function expect(
  values: Values,
  args: string[],
  command: string,
  needs: readonly (typeof COMMAND_OPTIONS)[number][],
  may: readonly (typeof COMMAND_OPTIONS)[number][] = [],
) {
  if (args.length > 0) throw new UsageError(`Unexpected argument "${args[0]}".`);
  for (const key of COMMAND_OPTIONS) {
    if (values[key] !== undefined && !needs.includes(key) && !may.includes(key)) {
      throw new UsageError(`The ${command} command does not take --${key}.`);
    }
  }
  const missing = needs.filter((key) => values[key] === undefined);
  if (missing.length > 0) {
    throw new UsageError(`The ${command} command needs ${missing.map((key) => `--${key}`).join(", ")}.`);
  }
}

/** Where the service runs, for the link `reset` prints: checked before anything is written. */
function baseOf(values: Values): string {
  const given = values.base ?? (values.remote ? process.env.POI_BASE_URL : LOCAL_BASE);
  if (given === undefined)
    throw new UsageError("With --remote, name the deployed service: --base URL or POI_BASE_URL.");
  let url: URL;
  try {
    url = new URL(given);
  } catch {
    throw new UsageError(`--base must be a URL, such as https://poi.example.com, not "${given}".`);
  }
  if (url.protocol !== "https:" && url.protocol !== "http:") {
    throw new UsageError(`--base must be an http or https URL, not "${given}".`);
  }
  return url.origin;
}

const print = (line = "") => process.stdout.write(`${line}\n`);
const note = (line: string) => process.stderr.write(`${line}\n`);

function printCreated(created: CreatedPerson, passwordGiven: boolean) {
  const what = `${created.role} of account "${created.account}"`;
  if (created.person_created) {
    print(`Created ${created.email} ("${created.name}") as ${what}.`);
    print(`  email:    ${created.email}`);
    print(`  password: ${created.password}${created.password_generated ? "  (generated)" : ""}`);
    note("The password is shown only now; only its hash is stored. Sign in with it, then add a passkey.");
    return;
  }
  print(
    created.member_added
      ? `${created.email} ("${created.name}") exists already: now ${what}; their name and password are as they were.`
      : `${created.email} is ${what} already; nothing changed.`,
  );
  if (passwordGiven) note("--password was not used: an existing person's password is theirs (reset gives a link).");
}

/** Rows as columns padded to their widest cell. */
function printTable(rows: string[][]) {
  const widths = rows[0]!.map((_, i) => Math.max(...rows.map((r) => r[i]!.length)));
  for (const row of rows) {
    print(
      row
        .map((cell, i) => cell.padEnd(widths[i]!))
        .join("  ")
        .trimEnd(),
    );
  }
}

/** One row per membership and per list given (a person in neither, one row). */
function printPeople(people: PersonSummary[]) {
  if (people.length === 0) {
    print("No people yet. Create one with: npm run people -- create --account NAME --email EMAIL --role ROLE");
    return;
  }
  const rows = [["EMAIL", "NAME", "ACCOUNT", "ROLE", "SIGNS IN WITH", "CREATED"]];
  for (const person of people) {
    const ways = [
      ...(person.password ? ["password"] : []),
      ...(person.passkeys > 0 ? [`${person.passkeys} passkey${person.passkeys === 1 ? "" : "s"}`] : []),
    ];
    const signIn = `${ways.join(", ") || "nothing yet"}${person.totp ? " + TOTP" : ""}`;
    const places = [
      ...person.memberships.map((m) => [m.account, m.role]),
      ...person.lists.map((l) => [l.account, `list ${l.list_id} ${l.role}`]),
    ];
    for (const [account, role] of places.length > 0 ? places : [["(none)", ""]]) {
      rows.push([person.email, person.name, account!, role!, signIn, person.created_at ?? ""]);
    }
  }
  printTable(rows);
}

async function main(argv: string[]): Promise<void> {
  const { values, positionals } = parseArgs({ args: argv, options, allowPositionals: true, strict: true });
  const [command, ...args] = positionals;
  if (values.help || command === "help") {
    print(USAGE);
    return;
  }
  if (command === undefined) throw new UsageError("Name a command: create, list, remove or reset.");
  const json = values.json === true;
  const execute = () => d1Execute(target(values));

  switch (command) {
    case "create": {
      expect(values, args, command, ["account", "email", "role"], ["name", "password"]);
      const created = await createPerson(execute(), {
        account: values.account!,
        email: values.email!,
        role: values.role!,
        name: values.name,
        password: values.password,
      });
      if (json) print(JSON.stringify(created));
      else printCreated(created, values.password !== undefined);
      return;
    }
    case "list": {
      expect(values, args, command, [], ["account"]);
      const people = await listPeople(execute(), { account: values.account });
      if (json) print(JSON.stringify({ people }));
      else printPeople(people);
      return;
    }
    case "remove": {
      expect(values, args, command, ["account", "email"]);
      const removed = await removeMember(execute(), { account: values.account!, email: values.email! });
      if (json) {
        print(JSON.stringify(removed));
        return;
      }
      print(
        `Removed ${removed.email} (${removed.role}) from account "${removed.account}": ` +
          "their tokens for it stop working at their next request.",
      );
      print(
        removed.other_accounts > 0
          ? `They are still a member of ${removed.other_accounts} other account${removed.other_accounts === 1 ? "" : "s"}.`
          : "They are a member of no account now; the person stays (create adds them again).",
      );
      return;
    }
    case "reset": {
      expect(values, args, command, ["email"], ["base"]);
      const base = baseOf(values);
      const issued = await issueReset(execute(), { email: values.email! });
      const link = `${base}/v3.0/auth/password-reset/${issued.token}`;
      if (json) {
        print(JSON.stringify({ ...issued, link }));
        return;
      }
      print(`Password reset link for ${issued.email}, good once until ${issued.expires_at}:`);
      print(`  ${link}`);
      print("The new password is set by a POST to it:");
      print(`  curl -X POST ${link} -H 'Content-Type: application/json' -d '{"password": "a long new phrase"}'`);
      note(
        "The link is shown only now; any earlier link of theirs no longer works. Every session of theirs ends when it is used.",
      );
      return;
    }
    default:
      throw new UsageError(`Unknown command "${command}"; use create, list, remove or reset.`);
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
  if (usage) note("Run `npm run people -- --help` for usage.");
  process.exitCode = usage ? 2 : 1;
  // Scripts asked for JSON: they get one object on stdout for failures too.
  if (argv.includes("--json")) print(JSON.stringify({ error: message, exit_code: process.exitCode }));
}
