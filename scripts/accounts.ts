/**
 * Where accounts live (docs/scaling.md, docs/operations.md "Shards"):
 * `npm run accounts -- <command>`. `list` and `init` read and write the
 * databases with `wrangler d1 execute`; `move` asks the running service to
 * move the account (src/operator/), so the move runs where the databases are
 * served, locally under `npm start` as deployed.
 *
 * Exit codes: 0 done, 1 could not be done, 2 the command line is wrong.
 */
import { parseArgs } from "node:util";
import { claimShardRange, rangeAbove, RECORDED_RANGES_SQL } from "../src/db/id-ranges.ts";
import { claimRangeSql, DIRECTORY, HIGHEST_SEQUENCE_SQL, ID_RANGE } from "../src/db/shard-plan.ts";
import {
  LOCAL_BASE,
  ndjsonLines,
  operatorFetch,
  refusal,
  serviceFrom,
  serviceShards,
  type Service,
} from "./lib/operator.ts";
import { allDatabases, batchOver, checkDistinctDatabases, configuredShards } from "./lib/shards.ts";
import { d1Execute, type Target } from "./lib/wrangler.ts";

const USAGE = `Usage: npm run accounts -- <command> [options]

Commands:
  list            Each account, the shard holding its content, and each shard's places.
  init            Give every shard but the directory an id range of its own, recorded in
                  the directory (run after adding a shard and migrating it; a shard that
                  has its range keeps it).
  move ACCOUNT --to SHARD
                  Ask the running service to move the account (its name or id) to SHARD
                  while it keeps serving: copy, catch up, pause its writes for a few
                  seconds, switch, delete the old rows. Prints its progress and, last,
                  its report as JSON. Ctrl-C before the switch stops it with the account
                  whole on its shard; run the command again to move it.

Options:
  --remote            The deployed databases, or for move the deployed service (default:
                      the local ones of npm start).
  --persist-to DIR    Local state directory, as given to \`npm start -- --persist-to\`
                      (list and init; move asks the service, which has its own).
  --base URL          move: where the service runs (default ${LOCAL_BASE}; with --remote,
                      POI_BASE_URL). Its operator secret: locally .dev.vars, deployed
                      POI_OPERATOR_SECRET.
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

const seconds = (ms: unknown) => `${(Number(ms) / 1000).toFixed(1).padStart(6)} s`;

/**
 * Asks the service to move the account and prints the move's lines as they come; the report (or the
 * failure) as JSON last. The first Ctrl-C asks the service to stop the move, which it does at its next
 * check (before the switch the account stays on its shard); a second one stops waiting for it.
 */
async function move(service: Service, account: string, to: string): Promise<number> {
  const { shards } = await serviceShards(service);
  if (!shards.includes(to)) {
    throw new UsageError(`--to must name one of the shards of the service at ${service.base}: ${shards.join(", ")}.`);
  }
  const path = `/operator/accounts/${encodeURIComponent(account)}/move`;
  const gone = new AbortController();
  let interrupts = 0;
  const interrupt = () => {
    if (++interrupts > 1) {
      console.log("Not waiting any longer; the service stops the move all the same, its client gone.");
      gone.abort();
      return;
    }
    console.log("Interrupted: asking the service to stop the move before its switch (Ctrl-C again: stop waiting).");
    operatorFetch(service, path, { method: "DELETE" }).then(
      async (response) => {
        if (response.status !== 202) console.log(`The service did not stop it: ${await refusal(response)}`);
        else await response.body?.cancel();
      },
      (error: unknown) => console.log(`The service did not stop it: ${error instanceof Error ? error.message : error}`),
    );
  };
  process.on("SIGINT", interrupt);
  try {
    const response = await operatorFetch(service, path, {
      method: "POST",
      body: JSON.stringify({ to }),
      signal: gone.signal,
    });
    if (response.status !== 200) {
      console.error(`The service refused the move: ${await refusal(response)}`);
      return 1;
    }
    let printed = 0;
    try {
      for await (const line of ndjsonLines(response.body!)) {
        switch (line.event) {
          case "started": {
            const from = line.account as { id: number; name: string; shard: string };
            console.log(
              `Moving account ${from.id} ("${from.name}") from ${from.shard} to ${line.to} at ${service.base}.`,
            );
            break;
          }
          case "log":
            console.log(`${seconds(line.ms)}  ${line.message}`);
            printed = Number(line.ms);
            break;
          case "progress":
            // A line every ten seconds is enough to see it alive.
            if (Number(line.ms) - printed >= 10_000) {
              console.log(`${seconds(line.ms)}  … ${Number(line.d1Calls).toLocaleString("en-US")} D1 calls so far`);
              printed = Number(line.ms);
            }
            break;
          case "stopping":
            console.log(`${seconds(line.ms)}  Stopping: ${line.reason}.`);
            break;
          case "done": {
            const report = line.report as { pauseMs: number };
            console.log(
              `${seconds(line.ms)}  Done, ${Number(line.d1Calls).toLocaleString("en-US")} D1 calls; ` +
                `the account's writes were paused for ${report.pauseMs} ms.`,
            );
            console.log(JSON.stringify(report));
            return 0;
          }
          case "failed":
            console.error(`${seconds(line.ms)}  ${line.interrupted ? "" : "The move failed: "}${line.error}`);
            console.log(JSON.stringify(line));
            return 1;
        }
      }
    } catch (error) {
      if (!gone.signal.aborted) throw error;
    }
    // The stream ended without the move's last line: say where the account is now, if the service says.
    const where = await operatorFetch(service, `/operator/accounts/${encodeURIComponent(account)}`).catch(() => null);
    const placed = where?.status === 200 ? ((await where.json()) as { shard: string }).shard : null;
    console.error(
      "The connection to the service ended before the move did" +
        (placed ? `; the account is on ${placed} now.` : ".") +
        " A move stopped before its switch leaves the account whole where it was; run the command again to move it.",
    );
    return 1;
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
        base: { type: "string" },
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
    if (command === "move") {
      if (args.length !== 1 || !values.to) throw new UsageError(USAGE);
      if (values["persist-to"] !== undefined) {
        throw new UsageError(
          "move asks the running service, which has its own state: start it with `npm start -- --persist-to DIR`.",
        );
      }
      checkDistinctDatabases(target);
      return await move(serviceFrom(values.remote, values.base), args[0]!, values.to);
    }
    if (values.base !== undefined) throw new UsageError("--base is for move.");
    checkDistinctDatabases(target);
    if (command === "list" && args.length === 0) await list(target);
    else if (command === "init" && args.length === 0) await init(target);
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
