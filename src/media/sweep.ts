/**
 * The media sweep, run by the cron trigger: deletes R2 objects that no row
 * references and that are older than an hour. Uploads are written before the
 * row that points to them, so a crash between the two writes (or a delete
 * that failed) leaves an unreferenced object; the hour leaves any request in
 * flight ample time to write its row first.
 */
import { sql } from "drizzle-orm";
import { database } from "../db/client";
import { categories, events, pinpoints } from "../db/schema";
import { shardBindings } from "../db/shards";

export const SWEEP_MIN_AGE_MS = 60 * 60 * 1000;

/** Prefix of uploaded objects (see upload.ts); nothing else in the bucket is swept. */
const UPLOAD_PREFIX = "m/";

/**
 * Of `keys`, those some pinpoint, event or category of any shard references (an object is shared by
 * no two accounts, but a move copies an account's rows before it deletes the source's): one query
 * per shard and batch, index probes.
 */
async function referencedKeys(env: Cloudflare.Env, keys: string[]): Promise<Set<string>> {
  const referenced = new Set<string>();
  for (const shard of shardBindings(env)) {
    const rows = await database(shard).all<{ key: string }>(sql`
      SELECT j.value AS key FROM json_each(${JSON.stringify(keys)}) AS j
      WHERE EXISTS (SELECT 1 FROM ${pinpoints} WHERE ${pinpoints.media_key} = j.value)
         OR EXISTS (SELECT 1 FROM ${events} WHERE ${events.media_key} = j.value)
         OR EXISTS (SELECT 1 FROM ${categories} WHERE ${categories.image_key} = j.value)`);
    for (const row of rows) referenced.add(row.key);
  }
  return referenced;
}

/**
 * Deletes unreferenced uploads older than an hour at `now` (epoch ms), one
 * listing page at a time (at most 1000, R2's limit for list and delete), and
 * reports how many objects it saw and deleted.
 */
export async function sweepMedia(
  env: Cloudflare.Env,
  { now, pageSize = 1000 }: { now: number; pageSize?: number },
): Promise<{ listed: number; deleted: number }> {
  let listed = 0;
  let deleted = 0;
  let cursor: string | undefined;
  do {
    const page = await env.MEDIA.list({ prefix: UPLOAD_PREFIX, limit: pageSize, cursor });
    listed += page.objects.length;
    const old = page.objects.filter((o) => o.uploaded.getTime() < now - SWEEP_MIN_AGE_MS).map((o) => o.key);
    if (old.length > 0) {
      const referenced = await referencedKeys(env, old);
      const orphans = old.filter((key) => !referenced.has(key));
      if (orphans.length > 0) await env.MEDIA.delete(orphans);
      deleted += orphans.length;
    }
    cursor = page.truncated ? page.cursor : undefined;
  } while (cursor);
  return { listed, deleted };
}
