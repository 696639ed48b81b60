/** The Worker: HTTP requests go to the Hono app; the cron trigger sweeps orphaned media. */
import { app } from "./app";
import { sweepMedia } from "./media/sweep";

export default {
  fetch: app.fetch,
  async scheduled(controller, env) {
    const result = await sweepMedia(env, { now: controller.scheduledTime });
    console.log(JSON.stringify({ level: "info", message: "media sweep", cron: controller.cron, ...result }));
  },
} satisfies ExportedHandler<Cloudflare.Env>;
