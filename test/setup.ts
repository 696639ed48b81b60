import { applyD1Migrations } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { claimRangeSql, DIRECTORY, ID_RANGE, shardNames } from "../src/db/shard-plan";
import { bindingNamed } from "../src/db/shards";

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
// every shard (vitest.shards.config.ts runs the suite with three), migrated side by side, each shard
// allocating ids from its own range as `npm run accounts -- init` arranges (docs/scaling.md, "Identifiers").
await Promise.all(
  shardNames(env.SHARDS).map(async (name, index) => {
    const db = bindingNamed(env, name);
    await migrate(db);
    if (name !== DIRECTORY) await db.batch(claimRangeSql(index * ID_RANGE).map((sql) => db.prepare(sql)));
  }),
);
