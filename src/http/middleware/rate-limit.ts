/**
 * Rate limits (OWASP API4): every authenticated request counts against its
 * client id, every request with a publishable key (the API's and the map
 * page's) against that key with the viewer's address (so viewers of one
 * public map never limit each other), and every key the service has to look
 * up in D1 against the viewer's address, before it is looked up (so guessing
 * keys costs a guesser its allowance, not the database a read per guess).
 * On the token endpoint, every attempt counts against its source
 * address before the secret is checked (what slows guessing), and every token
 * issued against its client id (what caps one client's issuing). Client ids
 * are not secret (every token carries one), so nothing anyone else sends may
 * count against a client's own correct requests from its own address.
 * Counted by the Workers Rate Limiting binding (`[[ratelimits]]` in
 * wrangler.toml; Miniflare runs it locally).
 *
 * Over a limit: 429 problem details with `Retry-After`. The IETF RateLimit
 * fields (draft-ietf-httpapi-ratelimit-headers): `RateLimit-Policy` on every
 * response of a limited route, `RateLimit` only on a 429. The binding answers
 * only "allowed or not", never a remaining count or where its window stands,
 * so a `RateLimit` with `r` on other responses would be a guess; the draft
 * lets a server leave the field out, and a client must not expect it.
 */
import type { Context } from "hono";
import { createMiddleware } from "hono/factory";
import type { RateLimit as Limit } from "../../core/config";
import type { AppEnv, Principal } from "../../core/env";
import { ApiError } from "../../core/problem";

/** A policy: its name in the headers, the binding that counts it, and its limit from the config. */
type Policy = {
  name: string;
  binding: "CLIENT_LIMITER" | "PUBLIC_LIMITER" | "TOKEN_LIMITER" | "TOKEN_ADDRESS_LIMITER";
  limit: (c: Context<AppEnv>) => Limit;
};

const CLIENT: Policy = { name: "client", binding: "CLIENT_LIMITER", limit: (c) => c.var.config.rateLimits.client };
const PUBLIC: Policy = { name: "public", binding: "PUBLIC_LIMITER", limit: (c) => c.var.config.rateLimits.public };
const TOKEN: Policy = { name: "token-client", binding: "TOKEN_LIMITER", limit: (c) => c.var.config.rateLimits.token };
const TOKEN_ADDRESS: Policy = {
  name: "token-address",
  binding: "TOKEN_ADDRESS_LIMITER",
  limit: (c) => c.var.config.rateLimits.tokenAddress,
};

/** The binding, if this runtime has it (a Worker run without wrangler.toml's bindings is not limited). */
const limiterOf = (c: Context<AppEnv>, policy: Policy) => c.env[policy.binding] as RateLimit | undefined;

/** Sets `RateLimit-Policy` on every response, errors included, for the policies this runtime enforces. */
function advertise(policiesOf: (c: Context<AppEnv>) => readonly Policy[]) {
  return createMiddleware<AppEnv>(async function rateLimitPolicy(c, next) {
    await next();
    const items = policiesOf(c)
      .filter((policy) => limiterOf(c, policy))
      .map((policy) => {
        const { limit, period } = policy.limit(c);
        return `${policy.name};q=${limit};w=${period}`;
      });
    if (items.length > 0) c.res.headers.set("RateLimit-Policy", items.join(", "));
  });
}

/**
 * Counts one request against each policy's key (all of them, in parallel) and
 * throws a 429 if any is over its limit. Windows never last longer than their
 * period, so `Retry-After` is the longest period among those exceeded: by then
 * each of them has started over.
 */
async function enforce(c: Context<AppEnv>, checks: readonly (readonly [Policy, string])[]): Promise<void> {
  const counted = checks.flatMap(([policy, key]) => {
    const limiter = limiterOf(c, policy);
    return limiter ? [{ policy, outcome: limiter.limit({ key }) }] : [];
  });
  const exceeded: Policy[] = [];
  for (const { policy, outcome } of counted) if (!(await outcome).success) exceeded.push(policy);
  if (exceeded.length === 0) return;
  const wait = Math.max(...exceeded.map((policy) => policy.limit(c).period));
  const over = exceeded.map((policy) => {
    const { limit, period } = policy.limit(c);
    return `${limit} requests per ${period} seconds (${policy.name})`;
  });
  throw new ApiError("too_many_requests", `Over the limit of ${over.join(" and ")}; retry after ${wait} seconds.`, {
    headers: {
      "Retry-After": String(wait),
      // t: when the window has surely started over, as Retry-After says (the draft asks them to agree).
      RateLimit: exceeded.map((policy) => `${policy.name};r=0;t=${wait}`).join(", "),
    },
  });
}

/**
 * Before the credential check: every response of an authenticated route states
 * the policy it was counted against, per publishable key and address or per client.
 */
export const clientRatePolicy = () =>
  advertise((c) => ((c.get("principal") as Principal | undefined)?.kind === "key" ? [PUBLIC] : [CLIENT]));

/** On the map page (src/maps/), which takes a publishable key only: every response states the public policy. */
export const publicRatePolicy = () => advertise(() => [PUBLIC]);

/** Counts a request with a publishable key against the key and the viewer's address. */
export const limitKeyViewer = (c: Context<AppEnv>, keyId: number) =>
  enforce(c, [[PUBLIC, `${keyId} ${viewerAddress(c)}`]]);

/**
 * After the credential check: counts the request against its client id, its person (one budget across their
 * sessions and accounts, as a client's across its tokens), or its key and the viewer's address.
 */
export const clientRateLimit = () =>
  createMiddleware<AppEnv>(async function clientRateLimit(c, next) {
    const principal = c.var.principal;
    if (principal.kind === "key") await limitKeyViewer(c, principal.keyId);
    else
      await enforce(c, [[CLIENT, principal.kind === "client" ? principal.clientId : `person:${principal.personId}`]]);
    await next();
  });

/**
 * Before a publishable key is read from D1 (src/auth/publishable-keys.ts), and for a key found unknown
 * without a read: counts against the viewer's address, so an address guessing keys is refused before
 * its guesses cost a read.
 */
export const limitKeyLookup = (c: Context<AppEnv>) => enforce(c, [[PUBLIC, `lookup ${viewerAddress(c)}`]]);

/** On the token endpoint: every response states both token policies. */
export const tokenRatePolicy = () => advertise(() => [TOKEN_ADDRESS, TOKEN]);

/**
 * On passkey sign-in (src/people/passkeys-routes.ts), which counts every attempt against its source
 * address as the token endpoint does (`limitTokenAttempt`): every response states that policy.
 */
export const passkeySignInRatePolicy = () => advertise(() => [TOKEN_ADDRESS]);

/**
 * The source address as a rate-limit key: Cloudflare's `CF-Connecting-IP`
 * (set by the edge, not by the client). An IPv6 host usually owns a whole /64,
 * so its first four groups are the key.
 */
export function addressKey(address: string | undefined): string {
  if (!address) return "unknown";
  if (!address.includes(":")) return address;
  const [head = "", tail = ""] = address.toLowerCase().split("::");
  const left = head ? head.split(":") : [];
  const right = tail ? tail.split(":") : [];
  const groups = address.includes("::")
    ? [...left, ...Array(8 - left.length - right.length).fill("0"), ...right]
    : left;
  return `${groups
    .slice(0, 4)
    .map((group) => group.replace(/^0+(?=.)/, ""))
    .join(":")}::/64`;
}

const viewerAddress = (c: Context<AppEnv>) => addressKey(c.req.header("CF-Connecting-IP"));

/** Before the secret is checked: counts a token request against its source address. */
export function limitTokenAttempt(c: Context<AppEnv>): Promise<void> {
  return enforce(c, [[TOKEN_ADDRESS, viewerAddress(c)]]);
}

/** Once the secret matched and a token is about to be issued: counts it against the client id. */
export function limitIssuedToken(c: Context<AppEnv>, clientId: string): Promise<void> {
  return enforce(c, [[TOKEN, clientId]]);
}
