/**
 * Types of the Worker's bindings and of the per-request variables the
 * middleware sets. Binding types come from `wrangler types` (CloudflareBindings,
 * named so it does not collide with Hono's `Env`); secrets are added here
 * because wrangler.toml does not list them.
 */
import type { Config } from "./config";

declare global {
  namespace Cloudflare {
    interface Env {
      /** HMAC key that signs access tokens, and from which the cursor key is derived (Worker secret). */
      TOKEN_SIGNING_KEY?: string;
      /** The key before the last rotation, accepted for verification only. */
      TOKEN_SIGNING_KEY_PREVIOUS?: string;
    }
  }
}

export type Bindings = Cloudflare.Env;

/** Who is calling: read from a verified access token, never from the database. */
export type Principal = {
  clientId: string;
  accountId: number;
  scopes: readonly string[];
};

export type AppEnv = {
  Bindings: Bindings;
  Variables: {
    requestId: string;
    config: Config;
    principal: Principal;
  };
};
