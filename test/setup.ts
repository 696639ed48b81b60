import { applyD1Migrations } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { claimShardRange } from "../src/db/id-ranges";
import { DIRECTORY, shardNames } from "../src/db/shard-plan";
import { bindingNamed } from "../src/db/shards";
import { batchOf } from "./helpers";

/**
 * Every migration as applyD1Migrations applies them (the same statements in the same order, each one
 * recorded in its table), in one batch: one transaction per database instead of one per migration.
 * test/migrations.test.ts applies them one at a time, as D1 does when deployed.
 */
async function migrate(db: D1Database): Promise<void> {
  await applyD1Migrations(db, []);
  const recorded = db.prepare("INSERT INTO d1_migrations (name) VALUES (?)");
  await db.batch(
    env.TEST_MIGRATIONS.flatMap((migration) => [
      ...migration.queries.map((query) => db.prepare(query)),
      recorded.bind(migration.name),
    ]),
  );
}

// Storage is isolated per test file; each file starts from the migrated schema, in the directory and in
// every shard (vitest.shards.config.ts runs the suite with three), migrated side by side. Then each shard
// but the directory claims its id range in the directory, in order, as `npm run accounts -- init` does
// (docs/scaling.md, "Identifiers"): the shard at index i allocates from i · ID_RANGE.
const names = shardNames(env.SHARDS);
await Promise.all(names.map((name) => migrate(bindingNamed(env, name))));
const shards = Object.fromEntries(names.map((name) => [name, batchOf(bindingNamed(env, name))]));
for (const name of names) {
  if (name !== DIRECTORY) await claimShardRange(batchOf(env.DB), shards, name);
}
