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
      /** The credential of the operator routes (src/operator/); unset, they do not exist (Worker secret). */
      OPERATOR_SECRET?: string;
      /** Cloudflare Email sending (`[[send_email]]`, commented out in wrangler.toml): invitations are mailed with it. */
      EMAIL?: SendEmail;
    }
  }
}

export type Bindings = Cloudflare.Env;

/** A client calling with an access token: read from the verified token, never from the database. */
export type ClientPrincipal = {
  kind: "client";
  clientId: string;
  accountId: number;
  scopes: readonly string[];
};

/** An account's role for a member (docs/people-and-roles.md). */
export type Role = "owner" | "admin" | "editor" | "contributor" | "viewer";
/** A person's role on one list they were given without being a member of its account. */
export type ListRole = "editor" | "viewer";

/**
 * A person calling with an access token minted from their session
 * (src/auth/person-status.ts): `role` is their role in the account (null
 * when they only collaborate on some of its lists, `lists`), read from the
 * directory at every request, so a removed member or a lowered role takes
 * effect at once.
 */
export type PersonPrincipal = {
  kind: "person";
  personId: number;
  sessionId: string;
  accountId: number;
  role: Role | null;
  lists: ReadonlyMap<number, ListRole>;
  scopes: readonly string[];
};

/**
 * A position in a database, as a D1 session reports it: D1's bookmark and the
 * binding name of the database it is a position of (a shard, or the directory).
 */
export type DatabasePosition = { bookmark: string; database: string };

/**
 * A publishable key (src/auth/publishable-keys.ts): reads the account's
 * published content only, `lists` (null: every list of the account).
 * What versions the public cache's entries for it (src/http/middleware/public-cache.ts):
 * `tag`, part of the key's stored hash, which tells it from any other key
 * that had its id; `head` and `categoriesHead`, the newest change of its
 * account and of any category (the one content every account reads), each as
 * sequence and time, so a restored database's reused sequence numbers name
 * other versions; and `bookmark`, the D1 session position they were read at.
 */
export type KeyPrincipal = {
  kind: "key";
  keyId: number;
  accountId: number;
  scopes: readonly ["read"];
  lists: readonly number[] | null;
  expiresAt: number | null;
  tag: string;
  head: string;
  categoriesHead: string;
  bookmark: DatabasePosition | null;
};

/**
 * A signed-in browser's session (src/people/sessions.ts), read from its cookie: `id` is the SHA-256 of the
 * cookie's secret; `accountId` the account it acts in, null until one is chosen; `secondFactor` is `pending`
 * between the password and the TOTP code.
 */
export type SessionInfo = {
  id: string;
  personId: number;
  accountId: number | null;
  secondFactor: "none" | "pending" | "done";
  createdAt: number;
};

/** Who is calling. */
export type Principal = ClientPrincipal | PersonPrincipal | KeyPrincipal;

/**
 * What of its account a request may touch, from the caller's role (src/auth/operation-access.ts and
 * docs/people-and-roles.md): the rows it `acts` on, null for every row of the account, else those
 * `createdBy` created (when set) and those in or of the lists `lists`; and what it `sees`, null for
 * the whole account, else the lists given, the pinpoints in them and those pinpoints' events. `role`
 * names the role that sets the limits, for the answers that cite it.
 */
export type Reach = {
  role: string;
  acts: { createdBy: string | null; lists: readonly number[] } | null;
  sees: readonly number[] | null;
};

export type AppEnv = {
  Bindings: Bindings;
  Variables: {
    requestId: string;
    config: Config;
    principal: Principal;
    /** Set by `requireSession` on the routes a signed-in browser calls with its cookie. */
    session: SessionInfo;
    /** Set by `requireToken` with `principal`: the rows the caller's role lets the operation touch. */
    reach: Reach;
  };
};
