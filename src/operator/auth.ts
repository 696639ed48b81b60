/**
 * Who may call the operator routes: whoever sends the Worker secret
 * OPERATOR_SECRET as `Authorization: Bearer <secret>`. The secret is compared
 * hash-then-constant-time, as client secrets are (src/core/crypto.ts). Without
 * a usable secret (unset, or shorter than MIN_SECRET_LENGTH) every /operator
 * path answers exactly as an unknown path does, for every method, so a
 * deployment that never set one exposes nothing (docs/operations.md, "Shards").
 */
import { createMiddleware } from "hono/factory";
import { secretMatches } from "../core/crypto";
import type { AppEnv, Bindings } from "../core/env";
import { ApiError } from "../core/problem";
import { hashSecret } from "../core/secrets";
import { MIN_SECRET_LENGTH } from "../core/signing";
import { noResourceAt } from "../http/errors";

/** The operator secret when it is usable; null turns the operator routes off. */
function operatorSecret(env: Bindings): string | null {
  const secret = env.OPERATOR_SECRET;
  if (!secret) return null;
  if (secret.length < MIN_SECRET_LENGTH) {
    if (!warned) {
      warned = true;
      console.error(
        JSON.stringify({
          level: "error",
          message: "operator routes off",
          reason: `OPERATOR_SECRET is shorter than ${MIN_SECRET_LENGTH} characters`,
        }),
      );
    }
    return null;
  }
  return secret;
}
let warned = false;

const challenge = { "WWW-Authenticate": 'Bearer realm="operator"' };

export const requireOperator = createMiddleware<AppEnv>(async function requireOperator(c, next) {
  const secret = operatorSecret(c.env);
  if (secret === null) throw noResourceAt(c.req.path);
  const sent = /^Bearer +(\S+) *$/i.exec(c.req.header("Authorization") ?? "")?.[1];
  if (sent === undefined) {
    throw new ApiError("unauthorized", "Send the operator secret as Authorization: Bearer <OPERATOR_SECRET>.", {
      headers: challenge,
    });
  }
  if (!(await secretMatches(sent, await hashSecret(secret)))) {
    throw new ApiError("unauthorized", "The operator secret is not the one this service has.", {
      headers: { "WWW-Authenticate": 'Bearer realm="operator", error="invalid_token"' },
    });
  }
  return next();
});
