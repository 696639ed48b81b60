/**
 * The header that carries a D1 session's bookmark (http/middleware/d1-session.ts), the
 * name Cloudflare's own examples use, and the one shape a bookmark has: what the
 * session reads from a request and what the OpenAPI document states for the header
 * both ways (src/openapi/sync-headers.ts), so a change of shape is made here alone.
 * A leaf, so CORS in app.ts and the API reference name it without importing the
 * session middleware.
 */
export const BOOKMARK_HEADER = "X-D1-Bookmark";

/** D1's bookmark shape: four hex groups, 8-8-8-32 (what `getBookmark()` returns). */
export const BOOKMARK_PATTERN = /^[0-9a-f]{8}-[0-9a-f]{8}-[0-9a-f]{8}-[0-9a-f]{32}$/;

/** The bookmark a request sent, if it has the shape; undefined when none was sent or it is malformed. */
export function parseBookmark(header: string | undefined): string | undefined {
  const value = header?.trim();
  return value !== undefined && BOOKMARK_PATTERN.test(value) ? value : undefined;
}
