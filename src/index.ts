/** The Worker: HTTP requests go to the Hono app. */
import { app } from "./app";

export default {
  fetch: app.fetch,
} satisfies ExportedHandler<Cloudflare.Env>;
