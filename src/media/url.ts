/**
 * Public URLs of stored media: under the configured public base URL, or this
 * Worker's own `/media/` route on the request's origin.
 */
import type { Context } from "hono";
import type { AppEnv } from "../env";

export type MediaUrl = (key: string | null) => string | null;

/** A function turning stored media keys into absolute URLs for this request. */
export function mediaUrls(c: Context<AppEnv>): MediaUrl {
  const base = c.var.config.mediaPublicBaseUrl ?? `${new URL(c.req.url).origin}/media`;
  return (key) => (key === null ? null : `${base}/${key}`);
}
