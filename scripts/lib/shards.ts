/**
 * The shards of the configuration (wrangler.toml `[vars] SHARDS`, docs/scaling.md)
 * as the Node scripts reach them: one `Execute` per binding, migrations for
 * every database, and where a new account goes.
 */
import { join } from "node:path";
import { unstable_readConfig } from "wrangler";
import { DIRECTORY, shardNames } from "../../src/db/shard-plan.ts";
import type { Batch, Row as MoveRow } from "../../src/db/move.ts";
import { literal } from "./backup.ts";
import { sqlString, type Execute } from "./registry.ts";
import { d1Execute, ROOT, runWranglerCaptured, targetFlags, WranglerError, type Target } from "./wrangler.ts";

/** The shard bindings wrangler.toml names, in order. */
export function configuredShards(): readonly string[] {
  const config = unstable_readConfig({ config: join(ROOT, "wrangler.toml") });
  return shardNames(String((config.vars as Record<string, unknown>).SHARDS ?? ""));
}

/** The directory first, then every other shard: every database the service uses. */
export function allDatabases(): string[] {
  return [DIRECTORY, ...configuredShards().filter((name) => name !== DIRECTORY)];
}

/** Applies pending migrations to every database; returns how many each got. */
export function migrateAll(target: Target): Map<string, number> {
  const applied = new Map<string, number>();
  for (const binding of allDatabases()) {
    const { status, output } = runWranglerCaptured(["d1", "migrations", "apply", binding, ...targetFlags(target)]);
    if (status !== 0) {
      process.stderr.write(output);
      throw new WranglerError(`wrangler d1 migrations apply ${binding} failed (exit status ${status}).`);
    }
    applied.set(binding, Number(/About to apply (\d+) migration/.exec(output)?.[1] ?? 0));
  }
  return applied;
}

/** A move's `Batch` over wrangler: the parameters written as literals, the statements as one command. */
export function batchOver(target: Target, binding: string): Batch {
  const execute = d1Execute(target, binding);
  return async (statements) => {
    const inline = statements.map(({ sql, params }) => {
      let index = 0;
      return sql.replace(/\?/g, () => literal(params[index++]));
    });
    return (await execute(inline)) as MoveRow[][];
  };
}

/** The shard holding the fewest places, where a new account goes unless the operator names one. */
export async function emptiestShard(target: Target): Promise<string> {
  let best: { name: string; places: number } | null = null;
  for (const name of configuredShards()) {
    const [rows = []] = await d1Execute(target, name)(["SELECT count(*) AS places FROM pinpoints"]);
    const places = Number(rows[0]?.places ?? 0);
    if (!best || places < best.places) best = { name, places };
  }
  return best!.name;
}

/**
 * Gives every shard but the directory its copy of the account's row: its content references it on its
 * shard, its categories on every shard (docs/scaling.md). Idempotent, so running a registration again
 * repairs an interrupted one.
 */
export async function copyAccountToShards(directory: Execute, target: Target, accountId: number): Promise<void> {
  const [rows = []] = await directory([`SELECT id, name, created_at, shard FROM accounts WHERE id = ${accountId}`]);
  const row = rows[0];
  if (!row) return;
  for (const binding of configuredShards().filter((name) => name !== DIRECTORY)) {
    await d1Execute(
      target,
      binding,
    )([
      `INSERT INTO accounts (id, name, created_at, shard) VALUES (${accountId}, ${sqlString(String(row.name))}, ${Number(row.created_at)}, ${sqlString(String(row.shard))}) ON CONFLICT (id) DO NOTHING`,
    ]);
  }
}
