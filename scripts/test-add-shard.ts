/**
 * Two shards added at once, as docs/operations.md "Shards" allows, run locally
 * (`npm run test:cli`): in a copy of the project whose wrangler.toml gets both,
 * `npm run accounts -- init` gives them two different id ranges and keeps them
 * when run again. The guide's steps one shard at a time, and an account moved
 * under load with `npm run accounts -- move`, are scripts/test-move.ts's. The
 * copy keeps the working tree's wrangler.toml as it is.
 */
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { cpSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, test } from "node:test";
import { ID_RANGE } from "../src/db/shard-plan.ts";
import { ROOT } from "./lib/wrangler.ts";

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

/** Runs one of the copy's scripts (or wrangler) the way `npm run` would, and returns its standard output. */
function run(args: string[], timeout: number, cwd: string): string {
  const result = spawnSync(process.execPath, args, {
    cwd,
    encoding: "utf8",
    timeout,
    env: { ...process.env, WRANGLER_SEND_METRICS: "false" },
  });
  assert.equal(result.status, 0, `${args.join(" ")}:\n${result.stdout}\n${result.stderr}`);
  return result.stdout;
}

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
