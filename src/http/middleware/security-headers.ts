/**
 * Security headers on every response (OWASP Secure Headers), with hono's
 * secureHeaders: `X-Content-Type-Options: nosniff`, `Referrer-Policy:
 * no-referrer`, a Content-Security-Policy that lets an API response run or
 * embed nothing, no framing, `Cross-Origin-Resource-Policy: same-origin`, HSTS,
 * and never `X-Powered-By`. A header a route sets itself is kept: the media
 * route answers `Cross-Origin-Resource-Policy: cross-origin` so an `<img>` on
 * another origin can load it, /docs has the policy its page needs, and the map
 * page (src/maps/) names the origins that may frame it.
 */
import { createMiddleware } from "hono/factory";
import { secureHeaders } from "hono/secure-headers";

const headers = secureHeaders({
  contentSecurityPolicy: { defaultSrc: ["'none'"], frameAncestors: ["'none'"] },
  // Set below, where the response's policy forbids framing.
  xFrameOptions: false,
  // Without includeSubDomains: the API's host should not decide for the operator's other hosts.
  strictTransportSecurity: "max-age=31536000",
  overwrite: false,
});

/** The sources of the policy's `frame-ancestors` directive, or null when it has none. */
function frameAncestors(policy: string | null): string | null {
  const directive = policy
    ?.split(";")
    .map((part) => part.trim())
    .find((part) => /^frame-ancestors(\s|$)/i.test(part));
  return directive === undefined ? null : directive.slice("frame-ancestors".length).trim();
}

/**
 * hono's secure headers, then `X-Frame-Options: DENY` on every response whose
 * policy forbids framing (`frame-ancestors 'none'`: all but the map page).
 * X-Frame-Options can name no origin, only DENY or SAMEORIGIN, and browsers
 * that know CSP ignore it beside `frame-ancestors` (CSP Level 3, frame-ancestors), so a page
 * that others may frame goes without it rather than contradict its policy.
 */
export const securityHeaders = createMiddleware(async function securityHeaders(c, next) {
  await headers(c, next);
  if (frameAncestors(c.res.headers.get("Content-Security-Policy")) === "'none'") {
    c.res.headers.set("X-Frame-Options", "DENY");
  }
});
