/**
 * CORS for browser clients, on the origins the deploy allows (`CORS_ORIGINS`,
 * read from `c.var.config`, so mounted after withConfig): the request headers a
 * client may send and the response headers its script may read.
 */
import { cors } from "hono/cors";
import type { AppEnv } from "../../core/env";
import { BOOKMARK_HEADER } from "../bookmark-header";

export const corsPolicy = cors({
  origin: (origin, c) => {
    const allowed = (c as unknown as { var: AppEnv["Variables"] }).var.config.corsOrigins;
    return allowed.includes("*") ? "*" : allowed.includes(origin) ? origin : null;
  },
  allowMethods: ["GET", "HEAD", "POST", "PUT", "DELETE", "OPTIONS"],
  // Conditional and range headers let a script fetch public media as efficiently as an <img>;
  // If-Match makes a browser client's writes conditional, and the D1 bookmark gives it read-your-writes
  // (docs/offline-and-concurrency.md).
  allowHeaders: [
    "Authorization",
    "Content-Type",
    "X-Request-Id",
    "Prefer",
    "If-None-Match",
    "If-Match",
    "Idempotency-Key",
    BOOKMARK_HEADER,
    "Range",
    "If-Range",
  ],
  exposeHeaders: [
    "Location",
    "X-Request-Id",
    "WWW-Authenticate",
    "Allow",
    "Preference-Applied",
    "ETag",
    "Content-Range",
    "Accept-Ranges",
    "Retry-After",
    "RateLimit",
    "RateLimit-Policy",
    "Idempotent-Replayed",
    BOOKMARK_HEADER,
  ],
  maxAge: 86_400,
});
