/**
 * The Worker: HTTP requests go to the Hono app; the cron trigger sweeps
 * orphaned media and deletes expired idempotency keys.
 */
import { app } from "./app";
import { deleteExpiredKeys } from "./db/idempotency";
import { sweepMedia } from "./media/sweep";

export default {
  fetch: app.fetch,
  async scheduled(controller, env) {
    const result = await sweepMedia(env, { now: controller.scheduledTime });
    console.log(JSON.stringify({ level: "info", message: "media sweep", cron: controller.cron, ...result }));
    const keys = await deleteExpiredKeys(env.DB, controller.scheduledTime);
    console.log(JSON.stringify({ level: "info", message: "idempotency keys expired", deleted: keys }));
  },
} satisfies ExportedHandler<Cloudflare.Env>;
