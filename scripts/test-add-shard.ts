/**
 * Adding a shard, as docs/operations.md "Shards" tells an operator to, run
 * locally (`npm run test:cli`): a copy of the project whose wrangler.toml gets
 * a second database, the steps of the guide with the project's own commands,
 * and the service answering from both databases before and after an account
 * moves between them with `npm run accounts -- move` (asked of the running
 * service; scripts/test-move.ts moves a large account under load); and, in a copy of its
 * own, two shards added at once, which `npm run accounts -- init` gives two
 * different id ranges. The copies keep the working tree's wrangler.toml as it is.
 */
import assert from "node:assert/strict";
import { execFile, spawnSync } from "node:child_process";
import { cpSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, test } from "node:test";
import { promisify } from "node:util";
import { ID_RANGE } from "../src/db/shard-plan.ts";
import { ROOT } from "./lib/wrangler.ts";

const execFileAsync = promisify(execFile);

/** A copy of the project in a directory of its own, removed after the tests. */
function copyProject(): string {
  const dir = mkdtempSync(join(tmpdir(), "poi-add-shard-"));
  after(() => rmSync(dir, { recursive: true, force: true }));
  for (const entry of ["src", "scripts", "migrations", "public", "package.json", "tsconfig.json", "wrangler.toml"]) {
    cpSync(join(ROOT, entry), join(dir, entry), { recursive: true });
  }
  symlinkSync(join(ROOT, "node_modules"), join(dir, "node_modules"));
  writeFileSync(join(dir, ".dev.vars"), `TOKEN_SIGNING_KEY=${"k".repeat(48)}\nOPERATOR_SECRET=${"o".repeat(48)}\n`);
  return dir;
}

/** A `[[d1_databases]]` entry for shard `n`, with a database id of its own (a shared one is one SQLite file). */
const shardEntry = (n: number) =>
  `\n[[d1_databases]]\nbinding = "SHARD_${n}"\ndatabase_name = "poi-content-shard-${n}"\n` +
  `database_id = "00000000-0000-0000-0000-00000000000${n}"\nmigrations_dir = "migrations"\n`;

const copy = copyProject();
const state = join(copy, "state");

/** Runs one of the copy's scripts (or wrangler) the way `npm run` would, and returns its standard output. */
function run(args: string[], timeout = 120_000, cwd = copy): string {
  const result = spawnSync(process.execPath, args, {
    cwd,
    encoding: "utf8",
    timeout,
    env: { ...process.env, WRANGLER_SEND_METRICS: "false" },
  });
  assert.equal(result.status, 0, `${args.join(" ")}:\n${result.stdout}\n${result.stderr}`);
  return result.stdout;
}
const wrangler = (...args: string[]) => run(["node_modules/wrangler/bin/wrangler.js", ...args]);
const persist = ["--persist-to", state];

type Client = { client_id: string; client_secret: string };
const createClient = (account: string, ...more: string[]) => {
  const { client_id, client_secret } = JSON.parse(
    run(["scripts/clients.ts", "create", "--account", account, "--json", ...persist, ...more]),
  ) as Client;
  return { client_id, client_secret };
};

/** The copy's service under wrangler dev while `body` runs: a client's token and a request function, and its URL. */
async function serving(body: (as: (client: Client) => Promise<Api>, base: string) => Promise<void>): Promise<void> {
  const { startDevServer } = (await import(
    join(copy, "scripts/lib/dev-server.ts")
  )) as typeof import("./lib/dev-server.ts");
  const server = await startDevServer(["--local", ...persist, "--env-file", ".dev.vars"]);
  try {
    await body(async (client) => {
      const response = await fetch(`${server.base}/v3.0/oauth2/token`, {
        method: "POST",
        headers: { "Content-Type": "application/x-www-form-urlencoded" },
        body: new URLSearchParams({ grant_type: "client_credentials", ...client }),
      });
      assert.equal(response.status, 200, await response.clone().text());
      const { access_token } = (await response.json()) as { access_token: string };
      return (method, path, payload) =>
        fetch(`${server.base}${path}`, {
          method,
          headers: { Authorization: `Bearer ${access_token}`, "Content-Type": "application/json" },
          body: payload === undefined ? undefined : JSON.stringify(payload),
        });
    }, server.base);
  } catch (error) {
    throw new Error(`${String(error)}\nwrangler dev said:\n${server.output()}`, { cause: error });
  } finally {
    await server.stop();
  }
}
type Api = (method: string, path: string, payload?: unknown) => Promise<Response>;

async function createPlaces(api: Api, names: string[]): Promise<number[]> {
  const ids: number[] = [];
  for (const name of names) {
    const response = await api("POST", "/v3.0/pinpoints", { name, latitude: 48.85, longitude: 2.35 });
    assert.equal(response.status, 201, await response.clone().text());
    ids.push(((await response.json()) as { id: number }).id);
  }
  return ids;
}

async function names(api: Api, ids: number[]): Promise<string[]> {
  const found: string[] = [];
  for (const id of ids) {
    const response = await api("GET", `/v3.0/pinpoints/${id}`);
    assert.equal(response.status, 200, `${id}: ${await response.clone().text()}`);
    found.push(((await response.json()) as { name: string }).name);
  }
  return found;
}

const placesOn = (binding: string, account: string) =>
  (
    JSON.parse(
      wrangler(
        "d1",
        "execute",
        binding,
        "--local",
        ...persist,
        "--json",
        "--command",
        `SELECT count(*) AS n FROM pinpoints WHERE account_id = (SELECT id FROM accounts WHERE name = '${account}')`,
      ),
    ) as { results: { n: number }[] }[]
  )[0]!.results[0]!.n;

test("an operator adds a shard, places a new account on it and moves an old one there", async () => {
  // Before: one database, as npm start runs it.
  wrangler("d1", "migrations", "apply", "DB", "--local", ...persist);
  const early = createClient("early");
  let earlyPlaces: number[] = [];
  await serving(async (as) => {
    earlyPlaces = await createPlaces(await as(early), ["Louvre", "Orsay", "Pompidou"]);
  });

  // Steps 1 to 4 of the guide, locally: no `wrangler d1 create`, a database_id of its own. The placeholder
  // id of DB again would make both one SQLite file: refused before anything runs.
  const toml = join(copy, "wrangler.toml");
  const configured = readFileSync(toml, "utf8");
  const withShard = (id: string) =>
    configured.replace('SHARDS = "DB"', 'SHARDS = "DB,SHARD_1"') +
    '\n[[d1_databases]]\nbinding = "SHARD_1"\ndatabase_name = "poi-content-shard-1"\n' +
    `database_id = "${id}"\nmigrations_dir = "migrations"\n`;
  writeFileSync(toml, withShard("00000000-0000-0000-0000-000000000000"));
  const refused = spawnSync(process.execPath, ["scripts/accounts.ts", "init", ...persist], {
    cwd: copy,
    encoding: "utf8",
  });
  assert.equal(refused.status, 1);
  assert.match(
    refused.stderr,
    /DB and SHARD_1 name the same database \(database_id 00000000-0000-0000-0000-000000000000\)/,
  );
  writeFileSync(toml, withShard("00000000-0000-0000-0000-000000000001"));
  assert.match(readFileSync(toml, "utf8"), /SHARDS = "DB,SHARD_1"/);
  wrangler("d1", "migrations", "apply", "SHARD_1", "--local", ...persist);
  assert.match(run(["scripts/accounts.ts", "init", ...persist]), /SHARD_1: allocates ids from \d+/);
  // Step 5: a new account on the new shard, named; its ids come from the shard's own range.
  const late = createClient("late", "--shard", "SHARD_1");
  await serving(async (as) => {
    const lateApi = await as(late);
    const latePlaces = await createPlaces(lateApi, ["Tate", "Barbican"]);
    assert.ok(
      latePlaces.every((id) => id >= ID_RANGE),
      `ids ${latePlaces} from SHARD_1's range`,
    );
    assert.deepEqual(await names(await as(early), earlyPlaces), ["Louvre", "Orsay", "Pompidou"]);
    // Another account's id is a 403 across shards, as on one database.
    assert.equal((await lateApi("GET", `/v3.0/pinpoints/${earlyPlaces[0]}`)).status, 403);
  });
  assert.equal(placesOn("SHARD_1", "late"), 2);
  assert.equal(placesOn("DB", "late"), 0);

  // Moving the early account to the new shard: the command asks the running service (scripts/test-move.ts
  // moves a large account under load).
  await serving(async (as, base) => {
    // Not spawnSync: the service's output must keep flowing while the command runs.
    const { stdout } = await execFileAsync(
      process.execPath,
      ["scripts/accounts.ts", "move", "early", "--to", "SHARD_1", "--base", base],
      { cwd: copy, encoding: "utf8", timeout: 900_000 },
    );
    const report = JSON.parse(stdout.trim().split("\n").at(-1)!) as { from: string; to: string; purged: boolean };
    assert.deepEqual(report, { ...report, from: "DB", to: "SHARD_1", purged: true });
    const earlyApi = await as(early);
    assert.deepEqual(await names(earlyApi, earlyPlaces), ["Louvre", "Orsay", "Pompidou"]);
    const [added] = await createPlaces(earlyApi, ["Rodin"]);
    assert.ok(added! >= ID_RANGE);
  });
  assert.equal(placesOn("SHARD_1", "early"), 4);
  assert.equal(placesOn("DB", "early"), 0);
  assert.match(run(["scripts/accounts.ts", "list", ...persist]), /\tearly\tSHARD_1\n[\s\S]*\tlate\tSHARD_1\n/);
});

test("init gives two new shards two different id ranges, and keeps them when run again", () => {
  const dir = copyProject();
  const flags = ["--persist-to", join(dir, "state")];
  const toml = join(dir, "wrangler.toml");
  writeFileSync(
    toml,
    readFileSync(toml, "utf8").replace('SHARDS = "DB"', 'SHARDS = "DB,SHARD_1,SHARD_2"') +
      shardEntry(1) +
      shardEntry(2),
  );
  for (const binding of ["DB", "SHARD_1", "SHARD_2"]) {
    run(
      ["node_modules/wrangler/bin/wrangler.js", "d1", "migrations", "apply", binding, "--local", ...flags],
      120_000,
      dir,
    );
  }
  const claimed = run(["scripts/accounts.ts", "init", ...flags], 600_000, dir);
  const starts: Record<string, number> = Object.fromEntries(
    [...claimed.matchAll(/^(SHARD_\d): allocates ids from (\d+)\.$/gm)].map(([, binding, start]) => [
      binding,
      Number(start),
    ]),
  );
  assert.deepEqual(Object.keys(starts), ["SHARD_1", "SHARD_2"], claimed);
  assert.notEqual(starts.SHARD_1, starts.SHARD_2);
  for (const start of Object.values(starts)) assert.ok(start >= ID_RANGE && start % ID_RANGE === 0, `${start}`);

  const again = run(["scripts/accounts.ts", "init", ...flags], 600_000, dir);
  for (const [binding, start] of Object.entries(starts)) {
    assert.match(again, new RegExp(`^${binding}: has its id range already \\(from ${start}\\)\\.$`, "m"));
  }
});
