/** Puts this deploy's configuration (core/config.ts, parsed once per isolate) in `c.var.config`. */
import { createMiddleware } from "hono/factory";
import { configFor } from "../../core/config";
import type { AppEnv } from "../../core/env";

export const withConfig = createMiddleware<AppEnv>(async function withConfig(c, next) {
  c.set("config", configFor(c.env));
  await next();
});
