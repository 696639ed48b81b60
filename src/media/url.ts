/**
 * Public URLs of stored media: under the configured public base URL, or this
 * Worker's own `/media/` route on the request's origin. Built-in media live in
 * the Worker bundle, not in the bucket, so their URLs always name the Worker.
 */
import type { Context } from "hono";
import type { AppEnv } from "../core/env";
import { BUILTIN_PREFIX } from "./upload";

export type MediaUrl = (key: string | null) => string | null;

/** A function turning stored media keys into absolute URLs for this request. */
export function mediaUrls(c: Context<AppEnv>): MediaUrl {
  return mediaUrlsOn(new URL(c.req.url).origin, c.var.config.mediaPublicBaseUrl);
}

/** The same for the Worker at `origin`, outside a request (webhook payloads). */
export function mediaUrlsOn(origin: string, publicBaseUrl: string | null): MediaUrl {
  const own = `${origin}/media`;
  const base = publicBaseUrl ?? own;
  return (key) => (key === null ? null : `${key.startsWith(BUILTIN_PREFIX) ? own : base}/${key}`);
}
