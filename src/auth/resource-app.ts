/**
 * The sub-app every API resource mounts, with what each of its paths needs: a
 * valid access token whose holder's role allows the operation (src/auth/operation-access.ts)
 * and with the method's scope (or a publishable key, where the operation takes one), an `X-D1-Bookmark` this service issued if one is sent, the caller's rate limit, the public cache for keys, the
 * request body rules, then idempotency keys on POST (keyed by the caller's
 * account, fingerprinted over the body the body rules read).
 * Middleware that applies per client (after the token check) is added here.
 */
import { Hono } from "hono";
import type { AppEnv } from "../core/env";
import { jsonBody } from "../http/body";
import { checkBookmark } from "../http/middleware/d1-session";
import { idempotency } from "../http/middleware/idempotency";
import { publicCache } from "../http/middleware/public-cache";
import { clientRateLimit, clientRatePolicy } from "../http/middleware/rate-limit";
import { markTokenRequired } from "../http/route-metadata";
import { requireToken } from "./bearer";

export const resourceApp = () =>
  new Hono<AppEnv>().use(
    clientRatePolicy(),
    markTokenRequired(requireToken()),
    checkBookmark,
    clientRateLimit(),
    publicCache(),
    jsonBody(),
    idempotency(),
  );
