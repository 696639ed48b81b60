/** The seeded stack every measurement starts from: bundle, runtime, data and an access token. */
import { join } from "node:path";
import { buildBundle, startRuntime, type Bundle, type Runtime } from "./runtime.ts";
import { claimShardRange } from "../src/db/id-ranges.ts";
import { claimRangeSql, ID_RANGE } from "../src/db/shard-plan.ts";
import { batchOf, migrate, seed, type D1, type Seeded } from "./seed.ts";

export type Stack = { bundle: Bundle; rt: Runtime; seeded: Seeded; token: string; readyMs: number };

/** An access token for `client`, with both scopes, from the service at `api`. */
export async function tokenFor(api: URL, client: { id: string; secret: string }): Promise<string> {
  const response = await fetch(new URL("/v3.0/oauth2/token", api), {
    method: "POST",
    headers: {
      Authorization: `Basic ${btoa(`${client.id}:${client.secret}`)}`,
      "Content-Type": "application/x-www-form-urlencoded",
    },
    body: "grant_type=client_credentials",
  });
  if (response.status !== 200) throw new Error(`token: ${response.status} ${await response.text()}`);
  return ((await response.json()) as { access_token: string }).access_token;
}

/**
 * Starts the Worker and the baselines on fresh state under `dir`, seeds it, and gets a token for account A.
 * `publicMaps`: with what the public group measures too (bench/runtime.ts). `shards`: D1 bindings
 * besides the directory DB, each migrated and allocating ids from a range of its own as
 * `npm run accounts -- add-shard` sets one up; the seeded accounts live on the first of them.
 * `idRangeOf`: with no shards, the one database allocates ids from the range of the shard of that index
 * instead of from 1, so its ids are as long as a shard's (an id past 2^30 is no small integer to V8).
 */
export async function startStack(
  dir: string,
  options: {
    bundle?: Bundle;
    inspectorPort?: number;
    minify?: boolean;
    publicMaps?: boolean;
    shards?: string[];
    idRangeOf?: number;
  } = {},
): Promise<Stack> {
  const bundle = options.bundle ?? buildBundle(join(dir, "bundle"), { minify: options.minify });
  const t0 = performance.now();
  const rt = await startRuntime(join(dir, "state"), {
    api: bundle,
    baselines: true,
    publicMaps: options.publicMaps,
    inspectorPort: options.inspectorPort,
    shards: options.shards,
  });
  const readyMs = performance.now() - t0;
  try {
    const db = (await rt.mf.getD1Database("DB", "api")) as unknown as D1;
    await migrate(db);
    if (options.idRangeOf) {
      await db.batch(claimRangeSql(options.idRangeOf * ID_RANGE).map((sql) => db.prepare(sql)));
    }
    const shards = options.shards ?? [];
    const others: D1[] = [];
    for (const name of shards) {
      const shard = (await rt.mf.getD1Database(name, "api")) as unknown as D1;
      await migrate(shard);
      others.push(shard);
    }
    const batches = Object.fromEntries(
      [["DB", db], ...shards.map((name, i) => [name, others[i]!] as const)].map(([name, d1]) => [
        name,
        batchOf(d1 as D1),
      ]),
    );
    for (const name of shards) await claimShardRange(batchOf(db), batches, name);
    const seeded = await seed(
      db,
      shards.length > 0 ? { shard: shards[0]!, content: others[0]!, shards: others } : undefined,
    );
    return { bundle, rt, seeded, token: await tokenFor(rt.api, seeded.client), readyMs };
  } catch (error) {
    await rt.dispose();
    throw error;
  }
}
