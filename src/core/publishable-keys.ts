/**
 * What a publishable key may name (docs/publishing-maps.md), portable so
 * the registration tool checks keys by the same rules as the API.
 *
 * Origins: exact origins as browsers send them in `Origin` (RFC 6454 §6.1:
 * scheme, host, port; no default port, path or slash), or one leading
 * wildcard label, `https://*.example.org`, for any subdomain of a domain of
 * at least two labels at any depth (not the domain itself).
 */

/** More lists than this: publish every list (leave `lists` out). */
export const MAX_KEY_LISTS = 100;
export const MAX_KEY_ORIGINS = 50;
export const MAX_ORIGIN_LENGTH = 300;

/** How much of a key its listing shows: `pk_` and 6 characters (36 of its 192 bits). */
export const KEY_PREFIX_LENGTH = 9;

/** A host name or an IPv6 literal: what an origin a browser sends can name. */
const HOST = /^(?:[a-z0-9-]+(?:\.[a-z0-9-]+)*|\[[0-9a-f:.]+\])$/;

/** What a wildcard stands for: one or more DNS labels. */
const SUBDOMAINS = /^[a-z0-9-]+(?:\.[a-z0-9-]+)*$/;
const WILDCARD = /^(https?:\/\/)\*(\.[^/]+)$/;

/** Whether `value` is an origin or a wildcard pattern a key may name. */
export function isOriginPattern(value: string): boolean {
  const wildcard = WILDCARD.exec(value);
  const concrete = wildcard ? `${wildcard[1]}x${wildcard[2]}` : value;
  if (concrete.includes("*") || !/^https?:\/\//.test(concrete) || !URL.canParse(concrete)) return false;
  const url = new URL(concrete);
  if (url.origin !== concrete || !HOST.test(url.hostname)) return false;
  return !wildcard || url.hostname.split(".").length >= 3;
}

/** Whether the request origin `origin` matches one of `patterns`. */
export function originAllowed(patterns: readonly string[], origin: string | null): boolean {
  if (origin === null || origin === "null") return false;
  return patterns.some((pattern) => {
    const wildcard = WILDCARD.exec(pattern);
    if (!wildcard) return pattern === origin;
    const [, scheme, suffix] = wildcard;
    if (!origin.startsWith(scheme!) || !origin.endsWith(suffix!)) return false;
    return SUBDOMAINS.test(origin.slice(scheme!.length, origin.length - suffix!.length));
  });
}
