/**
 * Backup and restore of the base tables (see scripts/lib/backup.ts and the
 * operator guide, docs/operations.md "Backups"):
 *
 *   npm run backup -- export FILE [--remote | --persist-to DIR]
 *   npm run backup -- restore FILE [--remote | --persist-to DIR]
 *
 * `restore` applies every migration to the target (which must be empty),
 * then runs FILE; the triggers rebuild the search indexes as the rows go in.
 * With several shards (docs/scaling.md) every database has its file: the
 * directory FILE, each other shard FILE with its binding before the extension.
 *
 * Exit codes: 0 done, 1 could not be done, 2 the command line is wrong.
 */
import { closeSync, openSync, writeSync } from "node:fs";
import { resolve } from "node:path";
import { parseArgs } from "node:util";
import { DIRECTORY, SEQUENCED_TABLES } from "../src/db/shard-plan.ts";
import { exportBaseTables } from "./lib/backup.ts";
import { allDatabases } from "./lib/shards.ts";
import { d1Execute, runWrangler, targetFlags, WranglerError, type Target } from "./lib/wrangler.ts";

const USAGE = `Usage: npm run backup -- export FILE [--remote | --persist-to DIR]
       npm run backup -- restore FILE [--remote | --persist-to DIR]

export   writes the base tables of the database to FILE as SQL (FILE must not exist); with
         several shards, each other shard to FILE with its binding before the extension
         (backup.sql, backup.SHARD_1.sql, ...)
restore  applies every migration to empty databases, then runs their files

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
  // The directory to FILE, every other shard to FILE with its binding before the extension (docs/scaling.md).
  const files = allDatabases().map((binding) => ({ binding, path: shardFile(resolve(file), binding) }));
  if (command === "export") {
    for (const { binding, path } of files) {
      const fd = openSync(path, "wx");
      try {
        const execute = d1Execute(target, binding);
        const counts = await exportBaseTables(execute, (line) => {
          writeSync(fd, `${line}\n`);
        });
        // Where each table's ids continue: a shard's range (docs/scaling.md "Identifiers") is no row's.
        const [sequences = []] = await execute(["SELECT name, seq FROM sqlite_sequence"]);
        for (const { name, seq } of sequences) {
          if (!(SEQUENCED_TABLES as readonly unknown[]).includes(name)) continue;
          writeSync(fd, `UPDATE sqlite_sequence SET seq = max(seq, ${Number(seq)}) WHERE name = '${name}';\n`);
          writeSync(
            fd,
            `INSERT INTO sqlite_sequence (name, seq) SELECT '${name}', ${Number(seq)} WHERE NOT EXISTS (SELECT 1 FROM sqlite_sequence WHERE name = '${name}');\n`,
          );
        }
        console.log(`Wrote ${path} (${binding}):`, counts);
      } finally {
        closeSync(fd);
      }
    }
    return 0;
  }
  for (const { binding, path } of files) {
    const execute = d1Execute(target, binding);
    const [existing = []] = await execute([
      "SELECT count(*) AS n FROM sqlite_master WHERE type = 'table' AND name = 'pinpoints'",
    ]).catch(() => [[{ n: 0 }]]);
    if (Number(existing[0]?.n ?? 0) > 0) {
      const [rows = []] = await execute(["SELECT count(*) AS n FROM pinpoints"]);
      if (Number(rows[0]?.n) > 0) {
        throw new Error(`the target database ${binding} already holds pinpoints; restore into a new one`);
      }
    }
    const flags = targetFlags(target);
    if (runWrangler(["d1", "migrations", "apply", binding, ...flags]) !== 0) {
      throw new WranglerError("migrations failed");
    }
    if (runWrangler(["d1", "execute", binding, ...flags, "--yes", "--file", path]) !== 0) {
      throw new WranglerError("restoring the rows failed");
    }
    console.log(`Restored ${path} into ${binding}.`);
  }
  return 0;
}

/** FILE for the directory; FILE with `.BINDING` before its extension for any other shard. */
function shardFile(path: string, binding: string): string {
  if (binding === DIRECTORY) return path;
  const dot = path.lastIndexOf(".");
  return dot > path.lastIndexOf("/") ? `${path.slice(0, dot)}.${binding}${path.slice(dot)}` : `${path}.${binding}`;
}

main().then(
  (code) => process.exit(code),
  (error: unknown) => {
    console.error(error instanceof Error ? error.message : error);
    process.exit(1);
  },
);
