/**
 * A sub-app for one API resource, with what every resource path needs: a
 * valid access token with the method's scope, then the request body rules.
 */
import { Hono } from "hono";
import { requireToken } from "./auth/bearer";
import type { AppEnv } from "./core/env";
import { jsonBody } from "./http/body";
import { markTokenRequired } from "./openapi/metadata";

export const resourceApp = () => new Hono<AppEnv>().use(markTokenRequired(requireToken()), jsonBody());
