import { applyD1Migrations } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { claimRangeSql, DIRECTORY, ID_RANGE, shardNames } from "../src/db/shard-plan";
import { bindingNamed } from "../src/db/shards";

// Storage is isolated per test file; each file starts from the migrated schema, in the directory and in
// every shard (vitest.shards.config.ts runs the suite with three), each shard allocating ids from its own
// range as `npm run accounts -- init` arranges (docs/scaling.md, "Identifiers").
await applyD1Migrations(env.DB, env.TEST_MIGRATIONS);
for (const [index, name] of shardNames(env.SHARDS).entries()) {
  if (name === DIRECTORY) continue;
  const shard = bindingNamed(env, name);
  await applyD1Migrations(shard, env.TEST_MIGRATIONS);
  await shard.batch(claimRangeSql(index * ID_RANGE).map((sql) => shard.prepare(sql)));
}
