/**
 * The cookies of signed-in browsers: `HttpOnly`, `SameSite=Lax`, `Path=/`, and over https `Secure` with
 * the `__Host-` prefix (RFC 6265bis §4.1.3.2), which a browser accepts only from this host, so no other
 * site under the same domain can plant one (a session fixation through a sibling domain). Over plain http
 * (local development) the prefix cannot be used, and the bare name is read instead.
 */
import type { Context } from "hono";
import type { AppEnv } from "../core/env";

/** Whether the request came over https (as every deployed request does), so cookies are `Secure`. */
export const isHttps = (c: Context<AppEnv>) => new URL(c.req.url).protocol === "https:";

/** A cookie's name as this request sends and receives it: `__Host-<name>` over https. */
export const cookieName = (c: Context<AppEnv>, name: string) => (isHttps(c) ? `__Host-${name}` : name);
