/**
 * Where an account's content lives (docs/scaling.md): the directory's
 * `accounts.shard` names a D1 binding listed in `SHARDS`. Read once per
 * isolate and kept PLACEMENT_FRESH_MS, re-read in the background from
 * PLACEMENT_REFRESH_MS on, so a request for a known account waits for no
 * directory read. A move (src/db/move.ts) keeps the account's writes paused
 * for longer than that lifetime after it switched the directory, so by the
 * time the account is written on its new shard no isolate routes it to the old one.
 */
import { clock } from "../core/clock";
import { DIRECTORY, PLACEMENT_FRESH_MS, shardNames } from "./shard-plan";
const PLACEMENT_REFRESH_MS = 750;
const MAX_ENTRIES = 10_000;

type Bindings = Cloudflare.Env & Record<string, unknown>;
type Cached = { shard: string; fetchedAt: number; refreshing: boolean };

const placements = new Map<number, Cached>();

/** The D1 binding named `name`; throws when the configuration names a binding that does not exist. */
export function bindingNamed(env: Cloudflare.Env, name: string): D1Database {
  const binding = (env as Bindings)[name];
  if (!binding || typeof (binding as D1Database).prepare !== "function") {
    throw new Error(`SHARDS names ${name}, which is not a D1 binding of this Worker (wrangler.toml).`);
  }
  return binding as D1Database;
}

/** Every shard's binding, the directory included when it is one: for jobs that visit all content. */
export function shardBindings(env: Cloudflare.Env): D1Database[] {
  return shardNames(env.SHARDS).map((name) => bindingNamed(env, name));
}

async function readPlacement(env: Cloudflare.Env, accountId: number): Promise<string> {
  // From the primary: a lagging replica could still name the shard a moved account left.
  const row = await env.DB.withSession("first-primary")
    .prepare("SELECT shard FROM accounts WHERE id = ?")
    .bind(accountId)
    .first<{ shard: string }>();
  return row?.shard ?? DIRECTORY;
}

/**
 * The binding holding `accountId`'s content, as read at most PLACEMENT_FRESH_MS ago. Only reads that
 * have ended are kept: a request never waits on a read another request started. workerd ties I/O to
 * the request that started it, and an answer built after waiting on another request's read failed
 * under load in `npm start` with "Cannot perform I/O on behalf of a different request" (a 500).
 */
export async function placementOf(
  env: Cloudflare.Env,
  accountId: number,
  waitUntil: (promise: Promise<unknown>) => void,
): Promise<D1Database> {
  const names = shardNames(env.SHARDS);
  if (names.length === 1 && names[0] === DIRECTORY) return env.DB;
  const cached = placements.get(accountId);
  const age = cached ? clock.now() - cached.fetchedAt : Infinity;
  if (!cached || age >= PLACEMENT_FRESH_MS) {
    const fetchedAt = clock.now();
    const shard = await readPlacement(env, accountId);
    if (placements.size >= MAX_ENTRIES) placements.clear();
    placements.set(accountId, { shard, fetchedAt, refreshing: false });
    return bindingNamed(env, shard);
  }
  if (age >= PLACEMENT_REFRESH_MS && !cached.refreshing) {
    cached.refreshing = true;
    const started = clock.now();
    waitUntil(
      readPlacement(env, accountId).then(
        (shard) => placements.set(accountId, { shard, fetchedAt: started, refreshing: false }),
        () => {
          cached.refreshing = false;
        },
      ),
    );
  }
  return bindingNamed(env, cached.shard);
}
