/**
 * The Worker: HTTP requests go to the Hono app; the cron trigger sweeps
 * orphaned media, deletes expired idempotency keys and prunes the change
 * feed's tombstones once past the retention window (plus a day of grace for
 * clock skew and replica lag: a cursor in the window must never miss one),
 * on every shard (docs/scaling.md).
 */
import { app } from "./app";
import { configFor } from "./core/config";
import { pruneTombstones } from "./db/changes";
import { deleteExpiredKeys } from "./db/idempotency";
import { shardBindings } from "./db/shards";
import { sweepMedia } from "./media/sweep";

export default {
  fetch: app.fetch,
  async scheduled(controller, env) {
    const result = await sweepMedia(env, { now: controller.scheduledTime });
    console.log(JSON.stringify({ level: "info", message: "media sweep", cron: controller.cron, ...result }));
    const retentionMs = (configFor(env).changesRetentionDays + 1) * 24 * 60 * 60 * 1000;
    for (const shard of shardBindings(env)) {
      const keys = await deleteExpiredKeys(shard, controller.scheduledTime);
      console.log(JSON.stringify({ level: "info", message: "idempotency keys expired", deleted: keys }));
      const tombstones = await pruneTombstones(shard, controller.scheduledTime - retentionMs);
      console.log(JSON.stringify({ level: "info", message: "change feed tombstones pruned", deleted: tombstones }));
    }
  },
} satisfies ExportedHandler<Cloudflare.Env>;
