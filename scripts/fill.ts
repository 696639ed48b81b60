/**
 * `npm run fill`: runs the data fills that migrations left (src/db/fills.ts;
 * docs/operations.md, "Data fills") on every database of the configuration, in
 * batches, to the end. Each batch commits with the fill's cursor, so the
 * command can be stopped (Ctrl-C) and run again, and may run while the
 * deployed Worker's scheduled job fills too. `npm start` and `npm run preview`
 * fill the local databases themselves.
 *
 *   npm run fill -- --remote [--batch-ms N]
 *   npm run fill [-- --persist-to DIR]
 */
import { commandLine } from "./lib/command-line.ts";
import { batchOver } from "./lib/shards.ts";
import { fillDatabases, fillSummary } from "./lib/fills.ts";
import type { Target } from "./lib/wrangler.ts";

const USAGE = `Usage: npm run fill -- [--remote | --persist-to DIR] [--batch-ms N]

Runs the data fills migrations left on every database of wrangler.toml (DB and
each shard of SHARDS), in batches of about --batch-ms milliseconds each, until
they are done. Stop it at any time: it resumes where it stopped.

Options:
  --remote           The deployed databases (wrangler d1 execute --remote).
  --persist-to DIR   A local state directory (default .wrangler/state).
  --batch-ms N       Time a batch should take (default 5000 with --remote, where
                     each batch is a wrangler command of its own; 2000 locally).
  -h, --help         Show this help.`;

const say = (line: string) => process.stdout.write(`${line}\n`);

function main(): Promise<number> | number {
  const values = commandLine(USAGE, {
    remote: { type: "boolean" },
    "persist-to": { type: "string" },
    "batch-ms": { type: "string" },
  });
  if (typeof values === "number") return values;
  const batchMs = Number(values["batch-ms"] ?? (values.remote ? 5000 : 2000));
  if (!Number.isFinite(batchMs) || batchMs < 100) {
    process.stderr.write(`--batch-ms must be a number of milliseconds, at least 100.\n`);
    return 2;
  }
  const target: Target = { remote: values.remote === true, persistTo: values["persist-to"] };
  return fillDatabases((binding) => batchOver(target, binding), { batchMs, log: say }).then((runs) => {
    say(fillSummary(runs) ?? "Nothing to fill.");
    return 0;
  });
}

try {
  process.exitCode = await main();
} catch (error) {
  process.stderr.write(`npm run fill: ${error instanceof Error ? error.message : String(error)}\n`);
  process.exitCode = 1;
}
