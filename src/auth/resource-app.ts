/**
 * The sub-app every API resource mounts, with what each of its paths needs: a
 * valid access token with the method's scope, the client's rate limit, then
 * the request body rules.
 * Middleware that applies per client (after the token check) is added here.
 */
import { Hono } from "hono";
import type { AppEnv } from "../core/env";
import { jsonBody } from "../http/body";
import { clientRateLimit, clientRatePolicy } from "../http/rate-limit";
import { markTokenRequired } from "../http/route-metadata";
import { requireToken } from "./bearer";

export const resourceApp = () =>
  new Hono<AppEnv>().use(clientRatePolicy(), markTokenRequired(requireToken()), clientRateLimit(), jsonBody());
