/**
 * The shards of the configuration (wrangler.toml `[vars] SHARDS`, docs/scaling.md)
 * as the Node scripts reach them: one `Execute` per binding, migrations for
 * every database, where a new account goes, and the check that no two bindings
 * are one database.
 */
import { join } from "node:path";
import { unstable_readConfig } from "wrangler";
import { DIRECTORY, shardNames } from "../../src/db/shard-plan.ts";
import type { Batch, Row as MoveRow } from "../../src/db/move.ts";
import { inlined, sqlString, type Execute } from "./registry.ts";
import { d1Execute, ROOT, runWranglerCaptured, targetFlags, WranglerError, type Target } from "./wrangler.ts";

const readConfig = () => unstable_readConfig({ config: join(ROOT, "wrangler.toml") });

/**
 * Refuses a configuration in which two D1 bindings are one database: the same `database_id` (locally,
 * where `preview_database_id` comes first, the same SQLite file). Every shard would then be every
 * other, and a move between two of them would delete the account it moved.
 */
export function checkDistinctDatabases(target: Target): void {
  const bindings = new Map<string, string[]>();
  for (const { binding, database_id, preview_database_id } of readConfig().d1_databases) {
    // wrangler dev names a local database by these, in this order (the binding when neither is set).
    const id = (target.remote ? database_id : (preview_database_id ?? database_id)) ?? `binding ${binding}`;
    bindings.set(id, [...(bindings.get(id) ?? []), binding]);
  }
  const shared = [...bindings].filter(([, names]) => names.length > 1);
  if (shared.length === 0) return;
  throw new WranglerError(
    shared.map(([id, names]) => `${names.join(" and ")} name the same database (database_id ${id}).`).join(" ") +
      " Each would be every other: a move between them would delete the account." +
      " Give each [[d1_databases]] entry of wrangler.toml its own database_id: deployed, the id" +
      " `npx wrangler d1 create <database_name>` printed; for a local database only, any id no other entry uses," +
      ' such as a new UUID (node -e "console.log(crypto.randomUUID())"). See docs/operations.md, "Shards".',
  );
}

/** The shard bindings wrangler.toml names, in order. */
export function configuredShards(): readonly string[] {
  return shardNames(String((readConfig().vars as Record<string, unknown>).SHARDS ?? ""));
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

/**
 * A `Batch` (src/db/id-ranges.ts) over wrangler: the parameters written as literals, the statements as one
 * command. For the few statements of `init` and the data fills, never a move's copy: a move runs in the
 * Worker (src/operator/account-move.ts).
 */
export function batchOver(target: Target, binding: string): Batch {
  const execute = d1Execute(target, binding);
  return async (statements) => (await execute(statements.map(inlined))) as MoveRow[][];
}

/**
 * Where a new account goes unless the operator names a shard: the shard holding the fewest places, then,
 * among those (on a fresh setup every shard holds none), the one holding the fewest accounts, then the
 * first in SHARDS. So new accounts spread over new shards instead of all landing on the first.
 */
export async function emptiestShard(target: Target): Promise<string> {
  const [placed = []] = await d1Execute(target)(["SELECT shard, count(*) AS accounts FROM accounts GROUP BY shard"]);
  const accounts = new Map(placed.map((row) => [String(row.shard), Number(row.accounts)]));
  let best: { name: string; places: number; accounts: number } | null = null;
  for (const name of configuredShards()) {
    const [rows = []] = await d1Execute(target, name)(["SELECT count(*) AS places FROM pinpoints"]);
    const here = { name, places: Number(rows[0]?.places ?? 0), accounts: accounts.get(name) ?? 0 };
    if (!best || here.places < best.places || (here.places === best.places && here.accounts < best.accounts)) {
      best = here;
    }
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
