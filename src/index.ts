/**
 * The Worker: HTTP requests go to the Hono app; queue messages deliver
 * webhooks (src/webhooks/deliver.ts); the cron trigger resumes webhooks with
 * undelivered writes (a lost message loses nothing), prunes their outbox past
 * the change feed's retention window, and sweeps
 * orphaned media, deletes expired idempotency keys and prunes the change
 * feed's tombstones once past the retention window (plus a day of grace for
 * clock skew and replica lag: a cursor in the window must never miss one),
 * and seals the secrets stored plain or under the previous signing key
 * (src/core/sealed.ts), on every shard (docs/scaling.md), and people's TOTP
 * secrets in the directory (src/people/second-factor.ts); deletes the sign-in
 * tickets past their expiry (reset links, passkey challenges) from the
 * directory (src/people/tickets.ts); then runs the data fills migrations left
 * (src/db/fills.ts) in batches, until FILL_MINUTES into the run. `AccountMove`, the
 * Durable Object that moves an account to another shard, is exported for its binding.
 */
import { app, objectsJson } from "./app";
import { configFor } from "./core/config";
import { pruneTombstones } from "./changes/store";
import { sealingKeys } from "./core/sealed";
import { signingKeyProblem } from "./core/signing";
import { batchOn, runFills } from "./db/fills";
import { deleteExpiredKeys, sealStoredAnswers } from "./db/idempotency";
import { shardBindings } from "./db/shards";
import { sealTotpSecrets } from "./people/second-factor";
import { deleteExpiredTickets } from "./people/tickets";
import { sweepMedia } from "./media/sweep";
import { handleWebhookBatch, resumeWebhooks, type WebhookMessage } from "./webhooks/deliver";
import { sealWebhookSecrets } from "./webhooks/sealed-secrets";

/**
 * What a run spends on data fills: a cron invocation may run for 15 minutes and send D1 1,000
 * queries on the Workers Paid plan (developers.cloudflare.com/workers/platform/limits/,
 * developers.cloudflare.com/d1/platform/limits/); a fill's batch is one query of about two seconds
 * (src/db/fills.ts), and the jobs above take a few queries per shard (the sign-in tickets' sweep, at most
 * 20 in the directory: src/people/tickets.ts).
 */
const FILL_MINUTES = 12;
const FILL_QUERIES = 800;

export { AccountMove } from "./operator/account-move";

export default {
  fetch: app.fetch,
  async queue(batch, env, ctx) {
    await handleWebhookBatch(batch as MessageBatch<WebhookMessage>, env, objectsJson, (promise) =>
      ctx.waitUntil(promise),
    );
  },
  async scheduled(controller, env) {
    const started = Date.now();
    const result = await sweepMedia(env, { now: controller.scheduledTime });
    console.log(JSON.stringify({ level: "info", message: "media sweep", cron: controller.cron, ...result }));
    const retentionMs = (configFor(env).changesRetentionDays + 1) * 24 * 60 * 60 * 1000;
    // Without a usable signing key nothing can be sealed; the Worker answers 503 meanwhile.
    const sealing = signingKeyProblem(env) ? null : await sealingKeys(env);
    for (const shard of shardBindings(env)) {
      const keys = await deleteExpiredKeys(shard, controller.scheduledTime);
      console.log(JSON.stringify({ level: "info", message: "idempotency keys expired", deleted: keys }));
      const tombstones = await pruneTombstones(shard, controller.scheduledTime - retentionMs);
      console.log(JSON.stringify({ level: "info", message: "change feed tombstones pruned", deleted: tombstones }));
      const webhooks = await resumeWebhooks({ ...env, DB: shard }, controller.scheduledTime, retentionMs);
      console.log(JSON.stringify({ level: "info", message: "webhooks resumed", ...webhooks }));
      if (sealing) {
        const secrets = await sealWebhookSecrets(shard, sealing);
        const answers = await sealStoredAnswers(shard, sealing);
        console.log(
          JSON.stringify({
            level: "info",
            message: "secrets sealed",
            kid: sealing.current.kid,
            webhookSecrets: secrets.sealed,
            unreadable: secrets.unreadable,
            answers: answers.sealed,
            more: secrets.more || answers.more,
          }),
        );
      }
    }
    if (sealing) {
      const totp = await sealTotpSecrets(env.DB, sealing);
      console.log(JSON.stringify({ level: "info", message: "totp secrets sealed", kid: sealing.current.kid, ...totp }));
    }
    const tickets = await deleteExpiredTickets(env.DB, controller.scheduledTime);
    console.log(JSON.stringify({ level: "info", message: "sign-in tickets expired", ...tickets }));
    const deadline = started + FILL_MINUTES * 60_000;
    const shards = shardBindings(env);
    for (const shard of shards) {
      const fills = await runFills(batchOn(shard), {
        deadline,
        maxBatches: Math.floor(FILL_QUERIES / shards.length) - 1,
      });
      if (fills.batches > 0 || fills.pending.length > 0) {
        console.log(JSON.stringify({ level: fills.failed ? "error" : "info", message: "data fills", ...fills }));
      }
    }
  },
} satisfies ExportedHandler<Cloudflare.Env>;
