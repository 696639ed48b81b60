/**
 * Backup and restore of the base tables (see scripts/lib/backup.ts and the
 * operator guide, docs/operations.md "Backups"):
 *
 *   npm run backup -- export FILE [--remote | --persist-to DIR]
 *   npm run backup -- restore FILE [--remote | --persist-to DIR]
 *
 * `restore` applies every migration to the target (which must be empty),
 * then runs FILE; the triggers rebuild the search indexes as the rows go in.
 *
 * Exit codes: 0 done, 1 could not be done, 2 the command line is wrong.
 */
import { closeSync, openSync, writeSync } from "node:fs";
import { resolve } from "node:path";
import { parseArgs } from "node:util";
import { exportBaseTables } from "./lib/backup.ts";
import { d1Execute, runWrangler, targetFlags, WranglerError, type Target } from "./lib/wrangler.ts";

const USAGE = `Usage: npm run backup -- export FILE [--remote | --persist-to DIR]
       npm run backup -- restore FILE [--remote | --persist-to DIR]

export   writes the base tables of the database to FILE as SQL (FILE must not exist)
restore  applies every migration to an empty database, then runs FILE

Options:
  --remote           The deployed database (default: the local one of npm start)
  --persist-to DIR   A local database kept in DIR
  -h, --help         Show this help.`;

async function main(): Promise<number> {
  let parsed;
  try {
    parsed = parseArgs({
      allowPositionals: true,
      options: {
        remote: { type: "boolean", default: false },
        "persist-to": { type: "string" },
        help: { type: "boolean", short: "h" },
      },
    });
  } catch (error) {
    // parseArgs's own message is about positionals and "--"; the usage says what the command takes.
    console.error(`${error instanceof Error ? error.message.split(".")[0] : error}.\n\n${USAGE}`);
    return 2;
  }
  const { positionals, values } = parsed;
  if (values.help) {
    console.log(USAGE);
    return 0;
  }
  const [command, file] = positionals;
  if (!file || (command !== "export" && command !== "restore") || positionals.length > 2) {
    console.error(USAGE);
    return 2;
  }
  const target: Target = { remote: values.remote, persistTo: values["persist-to"] };
  const path = resolve(file);
  if (command === "export") {
    const fd = openSync(path, "wx");
    try {
      const counts = await exportBaseTables(d1Execute(target), (line) => {
        writeSync(fd, `${line}\n`);
      });
      console.log(`Wrote ${path}:`, counts);
    } finally {
      closeSync(fd);
    }
    return 0;
  }
  const [existing = []] = await d1Execute(target)([
    "SELECT count(*) AS n FROM sqlite_master WHERE type = 'table' AND name = 'pinpoints'",
  ]).catch(() => [[{ n: 0 }]]);
  if (Number(existing[0]?.n ?? 0) > 0) {
    const [rows = []] = await d1Execute(target)(["SELECT count(*) AS n FROM pinpoints"]);
    if (Number(rows[0]?.n) > 0) throw new Error("the target database already holds pinpoints; restore into a new one");
  }
  const flags = targetFlags(target);
  if (runWrangler(["d1", "migrations", "apply", "DB", ...flags]) !== 0) throw new WranglerError("migrations failed");
  if (runWrangler(["d1", "execute", "DB", ...flags, "--yes", "--file", path]) !== 0) {
    throw new WranglerError("restoring the rows failed");
  }
  console.log(`Restored ${path}.`);
  return 0;
}

main().then(
  (code) => process.exit(code),
  (error: unknown) => {
    console.error(error instanceof Error ? error.message : error);
    process.exit(1);
  },
);
