/**
 * The header that carries a D1 session's bookmark (http/middleware/d1-session.ts), the
 * name Cloudflare's own examples use. A leaf, so CORS in app.ts and the API
 * reference name it without importing the session middleware.
 */
export const BOOKMARK_HEADER = "X-D1-Bookmark";
