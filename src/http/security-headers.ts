/**
 * Security headers on every response (OWASP Secure Headers), with hono's
 * secureHeaders: `X-Content-Type-Options: nosniff`, `Referrer-Policy:
 * no-referrer`, a Content-Security-Policy that lets an API response run or
 * embed nothing, no framing, `Cross-Origin-Resource-Policy: same-origin`, HSTS,
 * and never `X-Powered-By`. A header a route sets itself is kept: the media
 * route answers `Cross-Origin-Resource-Policy: cross-origin` so an `<img>` on
 * another origin can load it, and /docs has the policy its page needs.
 */
import { secureHeaders } from "hono/secure-headers";

export const securityHeaders = secureHeaders({
  contentSecurityPolicy: { defaultSrc: ["'none'"], frameAncestors: ["'none'"] },
  xFrameOptions: "DENY",
  // Without includeSubDomains: the API's host should not decide for the operator's other hosts.
  strictTransportSecurity: "max-age=31536000",
  overwrite: false,
});
