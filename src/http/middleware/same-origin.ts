/**
 * Refuses an unsafe request that another site's page made a browser send
 * (OWASP CSRF Prevention Cheat Sheet, "Fetch Metadata headers" and "Verifying
 * origin with standard headers"): one whose `Sec-Fetch-Site` names another
 * origin, or whose `Origin` is not the service's (browsers without Fetch
 * Metadata send `Origin` on every cross-origin POST). A request with neither
 * header is no browser's, so no page elsewhere sent it. Used where a browser signs in or acts with its
 * session cookie (src/people/), which SameSite=Lax alone does not guard
 * against a sibling subdomain.
 */
import type { Context } from "hono";
import { createMiddleware } from "hono/factory";
import type { AppEnv } from "../../core/env";
import { ApiError } from "../../core/problem";

const SAFE_METHODS = new Set(["GET", "HEAD", "OPTIONS"]);

/** The origin browsers reach the service at: PUBLIC_ORIGIN when configured, else the request's own. */
export function serviceOrigin(c: Context<AppEnv>): string {
  return c.var.config.publicOrigin ?? new URL(c.req.url).origin;
}

/** Throws 403 `csrf_failed` when a page of another origin sent this unsafe request. */
export function assertSameOrigin(c: Context<AppEnv>): void {
  if (SAFE_METHODS.has(c.req.method)) return;
  // `none`: the person typed the address or used a bookmark; no page sent it.
  const site = c.req.header("Sec-Fetch-Site");
  if (site !== undefined && site !== "same-origin" && site !== "none") {
    throw new ApiError("csrf_failed", `A page of another origin sent this request (Sec-Fetch-Site: ${site}).`);
  }
  const origin = c.req.header("Origin");
  if (origin !== undefined && origin !== serviceOrigin(c)) {
    throw new ApiError("csrf_failed", `A page of another origin (${origin}) sent this request.`);
  }
}

export const sameOriginOnly = createMiddleware<AppEnv>(async function sameOriginOnly(c, next) {
  assertSameOrigin(c);
  await next();
});
