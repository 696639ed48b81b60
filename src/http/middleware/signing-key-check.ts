/**
 * Without a usable TOKEN_SIGNING_KEY the service can neither issue nor check
 * a token, so every request answers one 503 problem that names the secret and
 * how to set it, instead of 500s from deep inside the token code. This is
 * what a developer sees who runs plain `npx wrangler dev` without `.dev.vars`,
 * and what an operator sees who deployed without `wrangler secret put`.
 * There is deliberately no built-in fallback key: a key in the code would be
 * public, and nothing lets a Worker tell for certain that it runs locally.
 */
import { createMiddleware } from "hono/factory";
import type { AppEnv } from "../../core/env";
import { ApiError } from "../../core/problem";
import { signingKeyProblem } from "../../core/signing";

let logged = false;

export const requireSigningKey = createMiddleware<AppEnv>(async function requireSigningKey(c, next) {
  const problem = signingKeyProblem(c.env);
  if (!problem) return next();
  if (!logged) {
    logged = true;
    console.error(JSON.stringify({ level: "error", message: "not configured", reason: problem }));
  }
  throw new ApiError(
    "not_configured",
    `${problem}: it signs access tokens and page cursors. Locally, run \`npm start\` (it writes a random key to ` +
      `.dev.vars), or copy .dev.vars.example to .dev.vars and set a key of at least 32 characters ` +
      `(openssl rand -base64 48), then restart wrangler dev. Deployed, run \`npx wrangler secret put TOKEN_SIGNING_KEY\`.`,
  );
});
