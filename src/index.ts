/**
 * The Worker: HTTP requests go to the Hono app; queue messages deliver
 * webhooks (src/webhooks/deliver.ts); the cron trigger resumes webhooks with
 * undelivered writes (a lost message loses nothing), prunes their outbox past
 * the change feed's retention window, and sweeps
 * orphaned media, deletes expired idempotency keys and prunes the change
 * feed's tombstones once past the retention window (plus a day of grace for
 * clock skew and replica lag: a cursor in the window must never miss one),
 * on every shard (docs/scaling.md). `AccountMove`, the Durable Object that
 * moves an account to another shard, is exported for its binding.
 */
import { app, objectsJson } from "./app";
import { configFor } from "./core/config";
import { pruneTombstones } from "./changes/store";
import { deleteExpiredKeys } from "./db/idempotency";
import { shardBindings } from "./db/shards";
import { sweepMedia } from "./media/sweep";
import { handleWebhookBatch, resumeWebhooks, type WebhookMessage } from "./webhooks/deliver";

export { AccountMove } from "./operator/account-move";

export default {
  fetch: app.fetch,
  async queue(batch, env, ctx) {
    await handleWebhookBatch(batch as MessageBatch<WebhookMessage>, env, objectsJson, (promise) =>
      ctx.waitUntil(promise),
    );
  },
  async scheduled(controller, env) {
    const result = await sweepMedia(env, { now: controller.scheduledTime });
    console.log(JSON.stringify({ level: "info", message: "media sweep", cron: controller.cron, ...result }));
    const retentionMs = (configFor(env).changesRetentionDays + 1) * 24 * 60 * 60 * 1000;
    for (const shard of shardBindings(env)) {
      const keys = await deleteExpiredKeys(shard, controller.scheduledTime);
      console.log(JSON.stringify({ level: "info", message: "idempotency keys expired", deleted: keys }));
      const tombstones = await pruneTombstones(shard, controller.scheduledTime - retentionMs);
      console.log(JSON.stringify({ level: "info", message: "change feed tombstones pruned", deleted: tombstones }));
      const webhooks = await resumeWebhooks({ ...env, DB: shard }, controller.scheduledTime, retentionMs);
      console.log(JSON.stringify({ level: "info", message: "webhooks resumed", ...webhooks }));
    }
  },
} satisfies ExportedHandler<Cloudflare.Env>;
