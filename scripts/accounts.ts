/**
 * Where accounts live (docs/scaling.md, docs/operations.md "Shards"):
 * `npm run accounts -- <command>`.
 *
 * Exit codes: 0 done, 1 could not be done, 2 the command line is wrong.
 */
import { parseArgs } from "node:util";
import { moveAccount, MoveError } from "../src/db/move.ts";
import { claimShardRange, rangeAbove, RECORDED_RANGES_SQL } from "../src/db/id-ranges.ts";
import { claimRangeSql, DIRECTORY, HIGHEST_SEQUENCE_SQL, ID_RANGE } from "../src/db/shard-plan.ts";
import { sqlString } from "./lib/registry.ts";
import { allDatabases, batchOver, configuredShards } from "./lib/shards.ts";
import { d1Execute, type Target } from "./lib/wrangler.ts";

const USAGE = `Usage: npm run accounts -- <command> [options]

Commands:
  list            Each account, the shard holding its content, and each shard's places.
  init            Give every shard but the directory an id range of its own, recorded in
                  the directory (run after adding a shard and migrating it; a shard that
                  has its range keeps it).
  move ACCOUNT --to SHARD
                  Move the account (its name or id) to SHARD while it keeps serving:
                  copy, catch up, pause its writes for a few seconds, switch, delete
                  the old rows. Interrupted (Ctrl-C) before the switch, the account
                  stays whole on its shard; run the command again to move it.

Options:
  --remote            The deployed databases (default: the local ones of npm start).
  --persist-to DIR    Local state directory, as given to \`wrangler dev --persist-to\`.
  -h, --help          Show this help.`;

class UsageError extends Error {}

/**
 * Gives every shard but the directory an id range of its own, claimed in the directory
 * (src/db/id-ranges.ts), unless it has one: recorded there (then its sequences are set to it again, in
 * case the database was replaced), or, for a shard that claimed its range before ranges were recorded,
 * where its places' ids continue. Each database is read once: every `wrangler d1 execute` is a process.
 */
async function init(target: Target): Promise<void> {
  const directory = batchOver(target, DIRECTORY);
  const shards = Object.fromEntries(allDatabases().map((name) => [name, batchOver(target, name)]));
  let floor = ID_RANGE;
  const nextPlace = new Map<string, number>();
  for (const [name, shard] of Object.entries(shards)) {
    const [[highest] = [], [next] = []] = await shard([
      { sql: HIGHEST_SEQUENCE_SQL, params: [] },
      { sql: "SELECT coalesce(max(seq), 0) + 1 AS id FROM sqlite_sequence WHERE name = 'pinpoints'", params: [] },
    ]);
    floor = Math.max(floor, rangeAbove(Number(highest?.seq ?? 0)));
    nextPlace.set(name, Number(next?.id ?? 1));
  }
  const [recorded = []] = await directory([{ sql: RECORDED_RANGES_SQL, params: [] }]);
  const rangeOf = new Map(recorded.map((row) => [String(row.holder), Number(row.start)]));
  for (const binding of configuredShards()) {
    if (binding === DIRECTORY) continue;
    const start = rangeOf.get(binding);
    if (start !== undefined) {
      await shards[binding]!(claimRangeSql(start).map((sql) => ({ sql, params: [] })));
      console.log(`${binding}: has its id range already (from ${start}).`);
    } else if (nextPlace.get(binding)! >= ID_RANGE) {
      console.log(`${binding}: has its id range already (its places' ids continue from ${nextPlace.get(binding)}).`);
    } else {
      // The floor read above stays right: each claim is above every range recorded before it.
      console.log(`${binding}: allocates ids from ${await claimShardRange(directory, shards, binding, { floor })}.`);
    }
  }
}

async function list(target: Target): Promise<void> {
  const [accounts = []] = await d1Execute(target)(["SELECT id, name, shard FROM accounts ORDER BY id"]);
  for (const row of accounts) console.log(`${row.id}\t${row.name}\t${row.shard}`);
  for (const binding of configuredShards()) {
    const [rows = []] = await d1Execute(target, binding)(["SELECT count(*) AS places FROM pinpoints"]);
    console.log(`shard ${binding}: ${rows[0]?.places ?? 0} places`);
  }
}

async function move(target: Target, account: string, to: string): Promise<void> {
  const shards = configuredShards();
  if (!shards.includes(to)) throw new UsageError(`--to must name one of the shards: ${shards.join(", ")}.`);
  const where = /^\d+$/.test(account) ? `id = ${Number(account)}` : `name = ${sqlString(account)}`;
  const [rows = []] = await d1Execute(target)([`SELECT id FROM accounts WHERE ${where}`]);
  if (!rows[0]) throw new MoveError(`There is no account ${account}.`);
  const abort = new AbortController();
  const interrupt = () => {
    console.log("Interrupted: stopping before the switch (a second Ctrl-C does not stop it sooner).");
    abort.abort();
  };
  process.on("SIGINT", interrupt);
  try {
    const report = await moveAccount({
      account: Number(rows[0].id),
      to,
      directory: batchOver(target, DIRECTORY),
      shards: Object.fromEntries(shards.map((name) => [name, batchOver(target, name)])),
      // wrangler starts a process per batch: fewer, larger batches.
      batchRows: 500,
      signal: abort.signal,
      log: (line) => console.log(line),
    });
    console.log(JSON.stringify(report));
  } finally {
    process.off("SIGINT", interrupt);
  }
}

async function main(): Promise<number> {
  let parsed;
  try {
    parsed = parseArgs({
      allowPositionals: true,
      options: {
        to: { type: "string" },
        remote: { type: "boolean", default: false },
        "persist-to": { type: "string" },
        help: { type: "boolean", short: "h" },
      },
    });
  } catch (error) {
    console.error(`${error instanceof Error ? error.message : error}\n\n${USAGE}`);
    return 2;
  }
  const { positionals, values } = parsed;
  if (values.help) {
    console.log(USAGE);
    return 0;
  }
  const target: Target = { remote: values.remote, persistTo: values["persist-to"] };
  const [command, ...args] = positionals;
  try {
    if (command === "list" && args.length === 0) await list(target);
    else if (command === "init" && args.length === 0) await init(target);
    else if (command === "move" && args.length === 1 && values.to) await move(target, args[0]!, values.to);
    else throw new UsageError(USAGE);
  } catch (error) {
    if (error instanceof UsageError) {
      console.error(error.message);
      return 2;
    }
    throw error;
  }
  return 0;
}

main().then(
  (code) => process.exit(code),
  (error: unknown) => {
    console.error(error instanceof Error ? error.message : error);
    process.exit(1);
  },
);
