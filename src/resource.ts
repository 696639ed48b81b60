/**
 * A sub-app for one API resource, with what every resource path needs: a
 * valid access token with the method's scope, the client's rate limit, then
 * the request body rules.
 */
import { Hono } from "hono";
import { requireToken } from "./auth/bearer";
import type { AppEnv } from "./env";
import { jsonBody } from "./http/body";
import { clientRateLimit, clientRatePolicy } from "./http/rate-limit";
import { markTokenRequired } from "./openapi/metadata";

export const resourceApp = () =>
  new Hono<AppEnv>().use(clientRatePolicy(), markTokenRequired(requireToken()), clientRateLimit(), jsonBody());
