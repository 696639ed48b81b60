/**
 * The people feature's routes: /v3.0/auth (signing in, sessions, passwords,
 * TOTP, passkeys) and /v3.0/me, each behind the request body rules (src/http/body.ts).
 * They take the session cookie, not a bearer token: src/people/sessions.ts.
 */
import { Hono } from "hono";
import type { AppEnv } from "../core/env";
import { jsonBody } from "../http/body";
import { meRoutes } from "./me-routes";
import { passkeyRoutes } from "./passkeys-routes";
import { passwordRoutes } from "./password-routes";
import { signInRoutes } from "./sign-in-routes";
import { totpRoutes } from "./totp-routes";

export const authRoutes = new Hono<AppEnv>()
  .use(jsonBody())
  .route("/", signInRoutes)
  .route("/", passwordRoutes)
  .route("/", totpRoutes)
  .route("/passkeys", passkeyRoutes);

export const personRoutes = new Hono<AppEnv>().use(jsonBody()).route("/", meRoutes);
